package designbridge

import (
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"testing"
)

// TestAnswerMemoryGivenBack: what a recorded answer holds of
// answer_memory is given back when it is dropped (reset) or when the last
// reference to it goes, never before, so that the room is there for the
// next answers.
func TestAnswerMemoryGivenBack(t *testing.T) {
	const size = 4 << 20
	budget := newMemoryBudget(size)
	left := func() int64 { return budget.left.Load() }
	chunk := make([]byte, 1<<20)
	record := func(chunks int) (*answerRecorder, error) {
		rec := &answerRecorder{header: http.Header{}, budget: budget}
		rec.WriteHeader(http.StatusOK)
		var err error
		for i := 0; i < chunks && err == nil; i++ {
			_, err = rec.Write(chunk)
		}
		return rec, err
	}

	// Past the room: refused, and what it held is given back on reset.
	rec, err := record(8)
	if !rec.busy || !errors.Is(err, errAnswerBusy) {
		t.Fatalf("an answer past answer_memory: busy %v, error %v", rec.busy, err)
	}
	rec.reset()
	if left() != size {
		t.Errorf("after reset %d bytes left, want %d", left(), size)
	}

	// Within it: held by the answer until its last reference goes.
	rec, err = record(3)
	if err != nil {
		t.Fatal(err)
	}
	a := rec.answer(keyHeaders)
	if rec.reserved != 0 || left() == size {
		t.Fatalf("a 3 MiB answer: recorder holds %d, %d bytes left of %d", rec.reserved, left(), size)
	}
	a.retain() // a waiter
	a.release()
	if left() == size {
		t.Error("given back while a waiter still holds the answer")
	}
	a.release()
	if left() != size {
		t.Errorf("after the last release %d bytes left, want %d", left(), size)
	}

	// An answer of at most 1 MiB (and one without a budget) takes none.
	rec, _ = record(1)
	if rec.reserved != 0 || left() != size {
		t.Errorf("a 1 MiB answer holds %d bytes", rec.reserved)
	}
	rec.answer(keyHeaders).release()
	free := &answerRecorder{header: http.Header{}}
	free.WriteHeader(http.StatusOK)
	for range 3 {
		if _, err := free.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	free.answer(keyHeaders).release()
}

// TestAnswerBuffersReused: recording an ordinary answer (26 KB, its length
// declared) and releasing it takes its buffer from the pool and gives it
// back, so that exports in a row allocate no answer buffer: a buffer taken
// and dropped per export was garbage the collector paid for at thousands
// of exports a second.
func TestAnswerBuffersReused(t *testing.T) {
	if poisonFreed {
		t.Skip("under -race freed buffers are overwritten; allocation counts differ")
	}
	body := make([]byte, 26000)
	export := func() {
		rec := &answerRecorder{header: http.Header{"Content-Length": {"26000"}}}
		rec.WriteHeader(http.StatusOK)
		if _, err := rec.Write(body); err != nil {
			t.Fatal(err)
		}
		rec.answer(keyHeaders).release()
	}
	export() // the pool's first buffer
	var before, after runtime.MemStats
	const n = 200
	runtime.ReadMemStats(&before)
	for range n {
		export()
	}
	runtime.ReadMemStats(&after)
	if perExport := (after.TotalAlloc - before.TotalAlloc) / n; perExport > 8<<10 {
		t.Errorf("%d bytes allocated per recorded answer, want no answer buffer (under 8 KiB)", perExport)
	}
}

// TestAnswerMemoryCountsTheBuffer: what an answer holds of answer_memory
// is the buffer it got, rounded up to the pool's size class, not the size
// it asked for: an answer declared 1.5 MiB is held in a 2 MiB buffer.
func TestAnswerMemoryCountsTheBuffer(t *testing.T) {
	const declared = 3 << 19 // 1.5 MiB
	budget := newMemoryBudget(64 << 20)
	rec := &answerRecorder{header: http.Header{"Content-Length": {strconv.Itoa(declared)}}, budget: budget}
	rec.WriteHeader(http.StatusOK)
	if _, err := rec.Write(make([]byte, declared)); err != nil {
		t.Fatal(err)
	}
	if want := int64(cap(rec.body)) - spoolAbove; rec.reserved != want {
		t.Errorf("a %d-byte answer in a %d-byte buffer holds %d bytes of answer_memory, want %d", declared, cap(rec.body), rec.reserved, want)
	}
	rec.reset()
	if left := budget.left.Load(); left != 64<<20 {
		t.Errorf("after reset %d bytes left, want all", left)
	}
}

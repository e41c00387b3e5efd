//go:build !linux

package browserpool

// PageMemoryBounded says whether Config.MaxPageMemory bounds anything
// here (a *PageCrash that is OutOfMemory is then most likely a page past
// it).
const PageMemoryBounded = false

// limitPageMemory does nothing here: only Linux lets a process cap
// another's memory (prlimit).
func limitPageMemory(browserPID int, max int64) error { return nil }

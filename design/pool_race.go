//go:build race

package design

// Under the race detector a released tree is overwritten (see released),
// so that a use after Release reads the wrong design and races with the
// write, instead of by chance reading what it expects.
const poisonReleased = true

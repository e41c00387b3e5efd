//go:build race

package contentservice

// raceEnabled: the race detector makes sync.Pool drop what it holds at
// random, so pool reuse cannot be counted under -race.
const raceEnabled = true

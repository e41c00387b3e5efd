//go:build race

package render

// raceEnabled: the race detector's bookkeeping allocates, and it makes
// sync.Pool drop what it holds at random, so allocation budgets do not
// hold under -race.
const raceEnabled = true

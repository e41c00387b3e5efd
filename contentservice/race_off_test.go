//go:build !race

package contentservice

const raceEnabled = false // see race_on_test.go

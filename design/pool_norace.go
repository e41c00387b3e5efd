//go:build !race

package design

const poisonReleased = false // see pool_race.go

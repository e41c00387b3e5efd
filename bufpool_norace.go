//go:build !race

package designbridge

const poisonFreed = false // see bufpool_race.go

//go:build !unix

package tui

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }

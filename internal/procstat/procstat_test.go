package procstat

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSelf reads this process's own figures: its CPU time grows while it
// spins, and its peak RSS is at least its RSS.
func TestSelf(t *testing.T) {
	pid := os.Getpid()
	before, err := CPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	after := before
	for deadline := time.Now().Add(10 * time.Second); after-before < 20*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("CPU grew by %v in 10 s of spinning, want 20 ms", after-before)
		}
		for end := time.Now().Add(5 * time.Millisecond); time.Now().Before(end); {
		}
		if after, err = CPU(pid); err != nil {
			t.Fatal(err)
		}
	}
	rss, err := StatusKiB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	hwm, err := StatusKiB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || hwm < rss {
		t.Errorf("VmRSS %d KiB, VmHWM %d KiB: want 0 < VmRSS <= VmHWM", rss, hwm)
	}
	if _, err := StatusKiB(pid, "NoSuchField"); err == nil {
		t.Error("a missing field gave no error")
	}
	if _, err := CPU(-1); err == nil {
		t.Error("pid -1 gave no error")
	}
}

// TestState reads this process's own state and session: running or
// sleeping, in the session the kernel reports for it.
func TestState(t *testing.T) {
	state, session, err := State(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	if (state != "R" && state != "S") || session != want {
		t.Errorf("state %q, session %d; want R or S, session %d", state, session, want)
	}
	if _, _, err := State(-1); err == nil {
		t.Error("State(-1): no error")
	}
}

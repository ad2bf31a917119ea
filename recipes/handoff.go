package recipes

import (
	"fmt"
	"strings"
)

// HandOff says how a fair Lock's waiter learns that it holds the lock.
type HandOff uint8

const (
	// HandOffUnknown: not decided yet (the lock has not been used).
	HandOffUnknown HandOff = iota
	// HandOffMark: a holder's release writes its node in the transaction
	// that deletes it, and that event alone grants its successor: no
	// listing. Used where the server is seen to let only the node's owner
	// write it.
	HandOffMark
	// HandOffListing: the standard hand-off (Curator's, go-zookeeper's):
	// every wake-up lists the directory. Used where the server does not
	// enforce the owner's ACL (skipACL, a super user) or refuses the
	// owner's own identity (another digest algorithm).
	HandOffListing
)

func (h HandOff) String() string {
	switch h {
	case HandOffUnknown:
		return "unknown"
	case HandOffMark:
		return "release-mark"
	case HandOffListing:
		return "listing"
	}
	return fmt.Sprintf("HandOff(%d)", uint8(h))
}

// HandOff is the hand-off this lock's acquisitions use: known after the
// first one.
func (l *Lock) HandOff() HandOff { return HandOff(l.handOff.Load()) }

func handOffOf(marked bool) HandOff {
	if marked {
		return HandOffMark
	}
	return HandOffListing
}

// ownSequence is the sequence number the server gave our node path, created
// with the name prefix (a full path). Past 2^31 the server's counter wraps
// and it formats negative numbers ("%010d": "-2147483648", "-000000001"),
// which order wrongly by their last ten characters: ErrSequenceWrapped.
func ownSequence(prefix, path string) (int64, error) {
	suffix, ok := strings.CutPrefix(path, prefix)
	if ok && strings.HasPrefix(suffix, "-") {
		return 0, fmt.Errorf("%w: node %s", ErrSequenceWrapped, path)
	}
	seq, ok2 := parseSeq(path)
	if !ok || !ok2 || len(suffix) != SeqDigits {
		return 0, fmt.Errorf("recipes: node %s: no %d-digit sequence after %s", path, SeqDigits, prefix)
	}
	return seq, nil
}

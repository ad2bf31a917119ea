package loadrun

import (
	"errors"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// ErrDisplay is matched (errors.Is) by the error of a Display that could
// not show the runs (the dashboard's terminal failed): the advice to run
// without it is added here, where the command's flags are known.
var ErrDisplay = errors.New("load dashboard")

// reason is err as a user reads it: without the name of the library that
// returned it.
func reason(err error) error { return pkgerr.Reason(err) }

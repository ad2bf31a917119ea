package loadrun

import "github.com/zkherd/zkherd/internal/pkgerr"

// reason is err as a user reads it: without the name of the library that
// returned it.
func reason(err error) error { return pkgerr.Reason(err) }

package loadgen

import "fmt"

func newOtherWorkload(r *runner) (workload, error) {
	return nil, fmt.Errorf("%w: recipe %s is not supported by the load generator yet", ErrBadOptions, r.run.Recipe)
}

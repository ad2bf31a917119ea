package scenarios

import "reflect"

func withoutSrc(s Spec) Spec {
	s.src = nil
	return s
}

// specEqual compares two specs, ignoring where they came from.
func specEqual(a, b Spec) bool { return reflect.DeepEqual(withoutSrc(a), withoutSrc(b)) }

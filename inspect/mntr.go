package inspect

import "strconv"

// intKey reads an integer mntr value.
func intKey(mn map[string]string, key string) (int64, bool) {
	v, ok := mn[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, false
		}
		n = int64(f)
	}
	return n, true
}

func setInt(dst *int64, mn map[string]string, key string) {
	if v, ok := intKey(mn, key); ok {
		*dst = v
	}
}

func setFloat(dst *float64, mn map[string]string, key string) {
	if v, ok := mn[key]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			*dst = f
		}
	}
}

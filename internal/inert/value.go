package inert

import "reflect"

// All applies String, in place, to every string reachable from v (a
// pointer): struct fields, slice and array elements, map values, through
// pointers and interfaces. Byte slices are left alone (raw data, shown
// only through a decoder). A value whose strings are all safe is not
// copied: the check is a scan of bytes.
func All(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	walk(rv.Elem())
}

func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !safe(s) && v.CanSet() {
			v.SetString(String(s))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			walk(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i))
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String && v.Type().Key().Kind() != reflect.String {
			// Values must be copied out to change them; only string
			// values and keys are rewritten (no map of structs is
			// returned by the inspector).
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var fix []kv
		for iter.Next() {
			k, e := iter.Key(), iter.Value()
			nk, ne, changed := k, e, false
			if k.Kind() == reflect.String && !safe(k.String()) {
				nk, changed = reflect.ValueOf(String(k.String())).Convert(k.Type()), true
			}
			if e.Kind() == reflect.String && !safe(e.String()) {
				ne, changed = reflect.ValueOf(String(e.String())).Convert(e.Type()), true
			}
			if changed {
				fix = append(fix, kv{k, reflect.Value{}}, kv{nk, ne})
			}
		}
		for _, f := range fix {
			v.SetMapIndex(f.k, f.v)
		}
	}
}

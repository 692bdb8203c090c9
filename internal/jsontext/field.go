package jsontext

// Field returns the raw JSON text of the value of the top-level member key of
// the JSON object text obj (e.g. `"GET"`, `42`, `{"a":1}`), and whether it
// was found. The returned text shares obj's memory. Duplicate keys: the first
// occurrence wins. The members before the one found are validated, those
// after it are not looked at.
func Field[T Text](obj T, key string) (raw T, ok bool) {
	var zero T
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return zero, false
	}
	i = SkipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kend, escaped, ok := StringEnd(obj, i)
		if !ok {
			return zero, false
		}
		var match bool
		if escaped {
			match = StringEqual(obj[i:kend], key)
		} else {
			match = string(obj[i+1:kend-1]) == key
		}
		i = SkipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return zero, false
		}
		i = SkipSpace(obj, i+1)
		vend, ok := ValueEnd(obj, i)
		if !ok {
			return zero, false
		}
		if match {
			return obj[i:vend], true
		}
		i = SkipSpace(obj, vend)
		if i >= len(obj) || obj[i] != ',' {
			return zero, false
		}
		i = SkipSpace(obj, i+1)
	}
	return zero, false
}

package spanlines

import (
	"bytes"
	"errors"
)

// The export's JSON text as pdata writes it (compact, no whitespace), read
// back by a small scanner: encoding/json's Unmarshal into json.RawMessage
// costs four marshals, too much for the load generator at 20k spans/s.

type scope struct {
	scope, schemaURL []byte // JSON texts; nil when absent
	spans            [][]byte
}

type resource struct {
	resource, schemaURL []byte
	scopes              []scope
}

var errSyntax = errors.New("spanlines: unexpected JSON")

// skip returns the index after the JSON value starting at b[i].
func skip(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
		return 0, errSyntax
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, err := skip(b, i)
				if err != nil {
					return 0, err
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errSyntax
	}
	for ; i < len(b); i++ { // number, true, false, null
		switch b[i] {
		case ',', '}', ']':
			return i, nil
		}
	}
	return i, nil
}

// members calls f with each key of the object at b[i] and the index of its
// value; f returns the index after the value. It returns the index after
// the object.
func members(b []byte, i int, f func(key []byte, v int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, errSyntax
	}
	i++
	for i < len(b) && b[i] != '}' {
		end, err := skip(b, i)
		if err != nil || end >= len(b) || b[end] != ':' {
			return 0, errSyntax
		}
		key := b[i+1 : end-1]
		if i, err = f(key, end+1); err != nil {
			return 0, err
		}
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return i + 1, nil
}

// elements calls f with the index of each element of the array at b[i]; f
// returns the index after the element.
func elements(b []byte, i int, f func(v int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return 0, errSyntax
	}
	i++
	for i < len(b) && b[i] != ']' {
		var err error
		if i, err = f(i); err != nil {
			return 0, err
		}
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return i + 1, nil
}

// raw returns the value at b[v] and the index after it.
func raw(b []byte, v int, dst *[]byte) (int, error) {
	end, err := skip(b, v)
	if err == nil {
		*dst = b[v:end]
	}
	return end, err
}

// read returns the resources, scopes and span texts of the request b.
func read(b []byte) ([]resource, error) {
	var out []resource
	_, err := members(b, 0, func(key []byte, v int) (int, error) {
		if !bytes.Equal(key, []byte("resourceSpans")) {
			return skip(b, v)
		}
		return elements(b, v, func(v int) (int, error) {
			var r resource
			end, err := members(b, v, func(key []byte, v int) (int, error) {
				switch string(key) {
				case "resource":
					return raw(b, v, &r.resource)
				case "schemaUrl":
					return raw(b, v, &r.schemaURL)
				case "scopeSpans":
					return elements(b, v, func(v int) (int, error) {
						var s scope
						end, err := members(b, v, func(key []byte, v int) (int, error) {
							switch string(key) {
							case "scope":
								return raw(b, v, &s.scope)
							case "schemaUrl":
								return raw(b, v, &s.schemaURL)
							case "spans":
								return elements(b, v, func(v int) (int, error) {
									var span []byte
									end, err := raw(b, v, &span)
									s.spans = append(s.spans, span)
									return end, err
								})
							}
							return skip(b, v)
						})
						r.scopes = append(r.scopes, s)
						return end, err
					})
				}
				return skip(b, v)
			})
			out = append(out, r)
			return end, err
		})
	})
	return out, err
}

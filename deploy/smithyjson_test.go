package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// decodeSmithyJSON decodes AWS API JSON (a task definition as `aws ecs
// register-task-definition --cli-input-json` takes it) into an
// aws-sdk-go-v2 type, strictly: the SDK's types carry no JSON tags, and
// encoding/json matches keys case-insensitively and ignores unknown ones,
// so it would take "FireLensConfiguration" or "stopTimout" without a word.
// Here a key must be the API member name exactly (the Go field name with a
// lower-case first letter), every key must be known, and an enum value must
// be one of the enum's Values(). The SDK's own serializer then writes the
// decoded value back (see sdkRoundTrip), which confirms the names.
func decodeSmithyJSON(data []byte, out any) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("decodeSmithyJSON: need a non-nil pointer, got %T", out)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	return fill(v.Elem(), raw, "$")
}

// enumValues returns the values of a smithy enum type (its Values method),
// nil for a plain string.
func enumValues(t reflect.Type) []string {
	m, ok := t.MethodByName("Values")
	if !ok || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 {
		return nil
	}
	out := m.Func.Call([]reflect.Value{reflect.Zero(t)})[0]
	vals := make([]string, out.Len())
	for i := range vals {
		vals[i] = out.Index(i).String()
	}
	return vals
}

func fill(v reflect.Value, raw any, path string) error {
	if v.Kind() == reflect.Pointer {
		if raw == nil {
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := fill(p.Elem(), raw, path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object for %s, got %T", path, v.Type(), raw)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "" || strings.ToLower(k[:1]) != k[:1] {
				return fmt.Errorf("%s.%s: unknown field (API member names start lower-case)", path, k)
			}
			f, ok := v.Type().FieldByName(strings.ToUpper(k[:1]) + k[1:])
			if !ok || !f.IsExported() || f.Anonymous {
				return fmt.Errorf("%s.%s: unknown field in %s", path, k, v.Type())
			}
			if err := fill(v.FieldByIndex(f.Index), obj[k], path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		arr, ok := raw.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array for %s, got %T", path, v.Type(), raw)
		}
		s := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, e := range arr {
			if err := fill(s.Index(i), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("%s: want an object for %s, got %T", path, v.Type(), raw)
		}
		m := reflect.MakeMapWithSize(v.Type(), len(obj))
		for k, e := range obj {
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := fill(ev, e, path+"."+k); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), ev)
		}
		v.Set(m)
		return nil
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %T", path, raw)
		}
		if vals := enumValues(v.Type()); vals != nil && !slices.Contains(vals, s) {
			return fmt.Errorf("%s: %q is not a %s (one of %q)", path, s, v.Type().Name(), vals)
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			return fmt.Errorf("%s: want a boolean, got %T", path, raw)
		}
		v.SetBool(b)
		return nil
	case reflect.Int32, reflect.Int64, reflect.Int:
		n, ok := raw.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a number, got %T", path, raw)
		}
		i, err := n.Int64()
		if err != nil || v.OverflowInt(i) {
			return fmt.Errorf("%s: %s is not a %s", path, n, v.Type())
		}
		v.SetInt(i)
		return nil
	}
	return fmt.Errorf("%s: cannot decode into %s", path, v.Type())
}

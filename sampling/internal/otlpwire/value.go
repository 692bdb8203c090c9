package otlpwire

import "math"

// ValueType is the kind of an attribute value.
type ValueType uint8

const (
	ValueEmpty ValueType = iota // no value set
	ValueStr
	ValueBool
	ValueInt
	ValueDouble
	ValueBytes
	ValueArray
	ValueMap
)

// Value is an attribute value read from the wire; strings alias the request buffer.
type Value struct {
	typ ValueType
	str string // ValueStr
	num uint64 // ValueBool, ValueInt, ValueDouble bits
}

// Type returns the kind of the value.
func (v Value) Type() ValueType { return v.typ }

// Str returns a ValueStr's string, else "". It is a view into the request,
// valid while the request buffer is.
func (v Value) Str() string { return v.str }

// Int returns a ValueInt's value, else 0.
func (v Value) Int() int64 {
	if v.typ != ValueInt {
		return 0
	}
	return int64(v.num)
}

// Double returns a ValueDouble's value, else 0.
func (v Value) Double() float64 {
	if v.typ != ValueDouble {
		return 0
	}
	return math.Float64frombits(v.num)
}

// Bool returns a ValueBool's value, else false.
func (v Value) Bool() bool { return v.typ == ValueBool && v.num != 0 }

// Bits returns a number as it is held: a ValueInt's two's complement, a
// ValueDouble's IEEE bits, a ValueBool's varint (non-zero is true), else 0.
func (v Value) Bits() uint64 { return v.num }

var (
	kvFields       = mask(1, 2, 3)
	anyValueFields = mask(1, 2, 3, 4, 5, 6, 7, 8)
)

// lookupKV reports whether the KeyValue message kv has key and, if so, its value.
func lookupKV(kv []byte, key string) (Value, bool, error) {
	var k []byte
	values := false
	for pos := 0; pos < len(kv); {
		f, npos, err := next(kv, pos)
		if err != nil {
			return Value{}, false, err
		}
		pos = npos
		switch f.tag {
		case 1<<3 | wtLen:
			k = kv[f.start:f.end] // a later key replaces an earlier one
		case 2<<3 | wtLen:
			values = true
		case 3<<3 | wtVarint: // key_strindex, used by profiles only
		default:
			if err := checkKnown("KeyValue", kvFields, f); err != nil {
				return Value{}, false, err
			}
		}
	}
	if string(k) != key {
		return Value{}, false, nil
	}
	var v Value
	if !values {
		return v, true, nil
	}
	// pdata merges repeated value fields into one AnyValue: the last oneof
	// member set in any of them wins.
	for pos := 0; pos < len(kv); {
		f, npos, _ := next(kv, pos) // validated above
		pos = npos
		if f.tag == 2<<3|wtLen {
			if err := v.merge(kv[f.start:f.end]); err != nil {
				return Value{}, false, err
			}
		}
	}
	return v, true, nil
}

// merge reads the AnyValue message b into v. Arrays and maps are not walked.
func (v *Value) merge(b []byte) error {
	for pos := 0; pos < len(b); {
		f, npos, err := next(b, pos)
		if err != nil {
			return err
		}
		pos = npos
		switch f.tag {
		case 1<<3 | wtLen:
			*v = Value{typ: ValueStr, str: view(b[f.start:f.end])}
		case 2<<3 | wtVarint:
			*v = Value{typ: ValueBool, num: f.val}
		case 3<<3 | wtVarint:
			*v = Value{typ: ValueInt, num: f.val}
		case 4<<3 | wtI64:
			*v = Value{typ: ValueDouble, num: f.val}
		case 5<<3 | wtLen:
			*v = Value{typ: ValueArray}
		case 6<<3 | wtLen:
			*v = Value{typ: ValueMap}
		case 7<<3 | wtLen:
			*v = Value{typ: ValueBytes}
		case 8<<3 | wtVarint: // string_value_strindex: pcommon reports it as empty
			*v = Value{}
		default:
			if err := checkKnown("AnyValue", anyValueFields, f); err != nil {
				return err
			}
		}
	}
	return nil
}

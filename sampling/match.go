package sampling

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/jsontext"
)

// This file applies compiled matchers (compile.go) to the views of a span or
// a log record (view.go). The match methods only read and compare, so they
// do not allocate.

// matchString matches a string value.
func (vm *valueMatcher) matchString(s string) bool {
	switch vm.op {
	case opIn:
		for i := range vm.values {
			if vm.values[i].str == s {
				return true
			}
		}
		return false
	case opExists:
		return vm.exists
	case opRegex:
		return vm.re.MatchString(s)
	case opGlob:
		return globMatch(vm.glob, s)
	}
	return false
}

// matchValue matches a present attribute value. Numbers compare
// numerically; regex and glob apply to string values only.
func (vm *valueMatcher) matchValue(v attrValue) bool {
	if vm.op == opExists {
		return vm.exists
	}
	switch v.typ {
	case pcommon.ValueTypeStr:
		return vm.matchString(v.str)
	case pcommon.ValueTypeInt:
		return vm.matchNum(float64(v.int()))
	case pcommon.ValueTypeDouble:
		return vm.matchNum(v.double())
	case pcommon.ValueTypeBool:
		if vm.op != opIn {
			return false
		}
		for i := range vm.values {
			if vm.values[i].isBool && vm.values[i].b == v.bool() {
				return true
			}
		}
	}
	return false
}

func (vm *valueMatcher) matchNum(f float64) bool {
	if vm.op != opIn {
		return false
	}
	for i := range vm.values {
		if vm.values[i].isNum && vm.values[i].num == f {
			return true
		}
	}
	return false
}

// matchJSON matches the raw JSON text of a body field (present). Escaped
// strings are decoded into *scratch, which is reused across calls.
func (vm *valueMatcher) matchJSON(raw string, scratch *[]byte) bool {
	if vm.op == opExists {
		return vm.exists
	}
	if jsontext.IsString(raw) {
		if !jsontext.HasEscapes(raw) {
			return vm.matchString(raw[1 : len(raw)-1])
		}
		switch vm.op {
		case opIn:
			for i := range vm.values {
				if jsontext.StringEqual(raw, vm.values[i].str) {
					return true
				}
			}
			return false
		default:
			b, ok := jsontext.AppendString((*scratch)[:0], raw)
			*scratch = b
			if !ok {
				return false
			}
			if vm.op == opRegex {
				return vm.re.Match(b)
			}
			return globMatch(vm.glob, b)
		}
	}
	if f, ok := jsontext.Number(raw); ok {
		return vm.matchNum(f)
	}
	if b, ok := jsontext.Bool(raw); ok && vm.op == opIn {
		for i := range vm.values {
			if vm.values[i].isBool && vm.values[i].b == b {
				return true
			}
		}
	}
	return false
}

func matchFields(fields []fieldMatcher, attrs attrSet) bool {
	for i := range fields {
		f := &fields[i]
		v, ok := attrs.getAny(f.names)
		if !ok {
			if f.m.op == opExists && !f.m.exists {
				continue
			}
			return false
		}
		if !f.m.matchValue(v) {
			return false
		}
	}
	return true
}

func (m *matcher) matchSpan(v *spanView) bool {
	if m.signals&signalTraces == 0 {
		return false
	}
	if m.kinds != 0 && m.kinds&(1<<uint(v.kind)) == 0 {
		return false
	}
	if m.statuses != 0 && m.statuses&(1<<uint(v.statusCode)) == 0 {
		return false
	}
	if m.service != nil && !m.service.matchString(v.res.service) {
		return false
	}
	if m.spanName != nil && !m.spanName.matchString(v.name) {
		return false
	}
	if len(m.operations) > 0 {
		found := false
		spanOp := v.op()
		for _, op := range m.operations {
			if strings.EqualFold(op, spanOp) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return matchFields(m.resAttrs, v.res.attrs) && matchFields(m.attrs, v.attrs)
}

func (m *matcher) matchLog(v *logView) bool {
	if m.signals&signalLogs == 0 {
		return false
	}
	if m.service != nil && !m.service.matchString(v.service) {
		return false
	}
	if len(m.severities) > 0 && !m.matchSeverity(v.rec) {
		return false
	}
	if !matchFields(m.resAttrs, mapAttrs(v.resAttrs)) || !matchFields(m.attrs, v.recAttrs()) {
		return false
	}
	return len(m.body) == 0 || matchBody(m.body, v.rec.Body(), &v.scratch)
}

func (m *matcher) matchSeverity(rec plog.LogRecord) bool {
	if n := rec.SeverityNumber(); n != plog.SeverityNumberUnspecified {
		for _, r := range m.severities {
			if n >= r[0] && n <= r[1] {
				return true
			}
		}
		return false
	}
	text := rec.SeverityText()
	for _, name := range m.sevNames {
		if strings.EqualFold(text, name) {
			return true
		}
	}
	return false
}

// matchBody matches body fields of a JSON object text body or a Map body.
func matchBody(fields []fieldMatcher, body pcommon.Value, scratch *[]byte) bool {
	switch body.Type() {
	case pcommon.ValueTypeMap:
		return matchFields(fields, mapAttrs(body.Map()))
	case pcommon.ValueTypeStr:
		obj := body.Str()
		for i := range fields {
			f := &fields[i]
			raw, ok := jsontext.Field(obj, f.names[0])
			if !ok {
				if f.m.op == opExists && !f.m.exists {
					continue
				}
				return false
			}
			if !f.m.matchJSON(raw, scratch) {
				return false
			}
		}
		return true
	}
	return false
}

// globMatch reports whether s matches pattern, where '*' matches any run of
// characters (including '/') and '?' any single byte.
func globMatch[T jsontext.Text](pattern string, s T) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

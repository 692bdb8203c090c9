package sampling

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/loglevel"
)

// This file compiles a rule's match conditions once, at Start, into the
// matcher that match.go applies to every span and log record.

type signalMask uint8

const (
	signalTraces signalMask = 1 << iota
	signalLogs
)

// scalar is one configured value in the forms it can be compared in.
type scalar struct {
	str    string
	num    float64
	isNum  bool
	b      bool
	isBool bool
}

type valueOp uint8

const (
	opIn valueOp = iota // equals is "in" with one value
	opExists
	opRegex
	opGlob
)

// valueMatcher is one compiled value condition.
type valueMatcher struct {
	op     valueOp
	values []scalar
	exists bool // for opExists: want present (true) or absent (false)
	re     *regexp.Regexp
	glob   string
}

// fieldMatcher is a condition on one field: an attribute, read by any of
// its names (see attrNames), or a body field, read by its one name.
type fieldMatcher struct {
	names []string
	m     valueMatcher
}

var spanKinds = map[string]ptrace.SpanKind{
	"internal": ptrace.SpanKindInternal, "server": ptrace.SpanKindServer, "client": ptrace.SpanKindClient,
	"producer": ptrace.SpanKindProducer, "consumer": ptrace.SpanKindConsumer, "unspecified": ptrace.SpanKindUnspecified,
}

var statusCodes = map[string]ptrace.StatusCode{
	"unset": ptrace.StatusCodeUnset, "ok": ptrace.StatusCodeOk, "error": ptrace.StatusCodeError,
}

// matcher is a compiled MatchConfig.
type matcher struct {
	signals    signalMask
	spanName   *valueMatcher
	kinds      uint8 // bit per ptrace.SpanKind; 0 = any
	statuses   uint8 // bit per ptrace.StatusCode; 0 = any
	operations []string
	service    *valueMatcher
	attrs      []fieldMatcher
	resAttrs   []fieldMatcher
	severities [][2]plog.SeverityNumber
	sevNames   []string
	body       []fieldMatcher
}

// compileBits sets the bit of each name's code in table. A name not in it
// adds an error to errs that says which values field takes.
func compileBits[C ~int32](errs []error, field, noun string, names []string, table map[string]C, want string) (uint8, []error) {
	var bits uint8
	for _, name := range names {
		code, ok := table[strings.ToLower(name)]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: unknown %s %q (want %s)", field, noun, name, want))
			continue
		}
		bits |= 1 << uint(code)
	}
	return bits, errs
}

func compileMatch(c *MatchConfig) (*matcher, error) {
	m := &matcher{}
	var errs []error
	var err error
	if c.SpanName != nil {
		if m.spanName, err = compileValue(c.SpanName); err != nil {
			errs = append(errs, fmt.Errorf("span_name: %w", err))
		}
	}
	if c.Service != nil {
		if m.service, err = compileValue(c.Service); err != nil {
			errs = append(errs, fmt.Errorf("service: %w", err))
		}
	}
	m.kinds, errs = compileBits(errs, "kind", "span kind", c.Kind, spanKinds, "internal, server, client, producer or consumer")
	m.statuses, errs = compileBits(errs, "status", "status", c.Status, statusCodes, "unset, ok or error")
	for _, op := range c.Operation {
		if op == "" {
			errs = append(errs, errors.New("operation: empty value"))
		}
	}
	m.operations = c.Operation
	for _, s := range c.Severity {
		lo, hi, ok := loglevel.Range(strings.ToLower(s))
		if !ok {
			errs = append(errs, fmt.Errorf("severity: unknown level %q (want trace, debug, info, warn, error or fatal)", s))
			continue
		}
		m.severities = append(m.severities, [2]plog.SeverityNumber{lo, hi})
		m.sevNames = append(m.sevNames, strings.ToLower(s))
	}
	var e error
	if m.attrs, e = compileFields("attributes", c.Attributes, attrNames); e != nil {
		errs = append(errs, e)
	}
	if m.resAttrs, e = compileFields("resource_attributes", c.ResourceAttributes, attrNames); e != nil {
		errs = append(errs, e)
	}
	if m.body, e = compileFields("body", c.Body, func(k string) []string { return []string{k} }); e != nil {
		errs = append(errs, e)
	}

	spanOnly := c.SpanName != nil || len(c.Kind) > 0 || len(c.Status) > 0 || len(c.Operation) > 0
	logOnly := len(c.Severity) > 0 || len(c.Body) > 0
	switch strings.ToLower(c.Signal) {
	case "traces", "spans":
		m.signals = signalTraces
		if logOnly {
			errs = append(errs, errors.New("signal is traces but severity or body conditions only apply to logs"))
		}
	case "logs":
		m.signals = signalLogs
		if spanOnly {
			errs = append(errs, errors.New("signal is logs but span_name, kind, status or operation conditions only apply to spans"))
		}
	case "":
		switch {
		case spanOnly && logOnly:
			errs = append(errs, errors.New("mixes span-only conditions (span_name, kind, status, operation) with log-only ones (severity, body)"))
		case spanOnly:
			m.signals = signalTraces
		case logOnly:
			m.signals = signalLogs
		default:
			m.signals = signalTraces | signalLogs
		}
	default:
		errs = append(errs, fmt.Errorf("signal: unknown signal %q (want traces or logs)", c.Signal))
	}
	return m, errors.Join(errs...)
}

// compileFields compiles the conditions of fields; names gives the names
// each field is read by.
func compileFields(what string, fields map[string]any, names func(string) []string) ([]fieldMatcher, error) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic error order
	var out []fieldMatcher
	var errs []error
	for _, k := range keys {
		vm, err := compileValue(fields[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%q]: %w", what, k, err))
			continue
		}
		out = append(out, fieldMatcher{names: names(k), m: *vm})
	}
	return out, errors.Join(errs...)
}

// compileValue accepts a scalar (equals), a list (in) or a map with exactly
// one of equals, in, exists, regex, glob.
func compileValue(v any) (*valueMatcher, error) {
	switch x := v.(type) {
	case []any:
		return compileIn(x)
	case map[string]any:
		if len(x) != 1 {
			return nil, fmt.Errorf("want exactly one of equals, in, exists, regex, glob; got %d keys", len(x))
		}
		for op, arg := range x {
			switch op {
			case "equals":
				s, err := toScalar(arg)
				if err != nil {
					return nil, fmt.Errorf("equals: %w", err)
				}
				return &valueMatcher{op: opIn, values: []scalar{s}}, nil
			case "in":
				list, ok := arg.([]any)
				if !ok {
					return nil, fmt.Errorf("in: want a list, got %T", arg)
				}
				return compileIn(list)
			case "exists":
				b, ok := arg.(bool)
				if !ok {
					return nil, fmt.Errorf("exists: want true or false, got %v", arg)
				}
				return &valueMatcher{op: opExists, exists: b}, nil
			case "regex", "glob":
				s, ok := arg.(string)
				if !ok {
					return nil, fmt.Errorf("%s: want a string, got %T", op, arg)
				}
				if op == "glob" {
					return &valueMatcher{op: opGlob, glob: s}, nil
				}
				re, err := regexp.Compile(s)
				if err != nil {
					return nil, fmt.Errorf("regex: %w", err)
				}
				return &valueMatcher{op: opRegex, re: re}, nil
			default:
				return nil, fmt.Errorf("unknown operator %q (want equals, in, exists, regex or glob)", op)
			}
		}
	}
	s, err := toScalar(v)
	if err != nil {
		return nil, err
	}
	return &valueMatcher{op: opIn, values: []scalar{s}}, nil
}

func compileIn(list []any) (*valueMatcher, error) {
	if len(list) == 0 {
		return nil, errors.New("in: empty list")
	}
	vm := &valueMatcher{op: opIn}
	for i, e := range list {
		s, err := toScalar(e)
		if err != nil {
			return nil, fmt.Errorf("in[%d]: %w", i, err)
		}
		vm.values = append(vm.values, s)
	}
	return vm, nil
}

func toScalar(v any) (scalar, error) {
	switch x := v.(type) {
	case string:
		s := scalar{str: x}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			s.num, s.isNum = f, true
		}
		return s, nil
	case bool:
		return scalar{str: strconv.FormatBool(x), b: x, isBool: true}, nil
	case int:
		return scalar{str: strconv.Itoa(x), num: float64(x), isNum: true}, nil
	case int64:
		return scalar{str: strconv.FormatInt(x, 10), num: float64(x), isNum: true}, nil
	case uint64:
		return scalar{str: strconv.FormatUint(x, 10), num: float64(x), isNum: true}, nil
	case float64:
		return scalar{str: strconv.FormatFloat(x, 'f', -1, 64), num: x, isNum: true}, nil
	case nil:
		return scalar{}, errors.New("value is missing (use exists: true to test presence)")
	}
	return scalar{}, fmt.Errorf("unsupported value %v of type %T", v, v)
}

package queuedevents

import (
	"slices"
	"strings"
	"testing"
)

// event is one event as a writer gives it: its head (or "") and the rest.
type event struct{ head, own string }

func written(events []event, weight int) []byte {
	var w Writer
	b := w.Begin(weight, len(events))
	for _, ev := range events {
		b = append(b, ev.own...)
		var head []byte
		if ev.head != "" {
			head = []byte(ev.head)
		}
		w.Event(b, head)
	}
	return w.Finish(b, weight)
}

func readAll(t *testing.T, b []byte) ([]string, []byte, int) {
	t.Helper()
	events, ends, weight, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	start := 0
	for _, end := range ends {
		got = append(got, string(events[start:end]))
		start = end
	}
	return got, events, weight
}

func TestEventsComeBackAsTheyWent(t *testing.T) {
	in := []event{{"", "{\"a\":1}\n"}, {"", "{\"long\":\"" + strings.Repeat("x", 300) + "\"}\n"}, {"", "{}\n"}}
	b := written(in, 12345)
	if !Is(b) {
		t.Fatal("not told as this form")
	}
	got, events, weight := readAll(t, b)
	if !slices.Equal(got, []string{in[0].own, in[1].own, in[2].own}) || weight != 12345 {
		t.Errorf("read back %q weighing %d", got, weight)
	}
	if cap(events) != len(events) || &events[0] != &b[headerSize] {
		t.Error("events without heads were copied, or can be appended to in place")
	}
}

// Each head is stored once per run of events that begin with it, and put
// back in front of each.
func TestHeadsAreStoredOnceAndPutBack(t *testing.T) {
	resource := `{"resource":{"k8s.pod.name":"checkout-7d9f","k8s.namespace.name":"shop"}`
	other := `{"attributes":{"log.iostream":"stderr"}`
	in := []event{{resource, ",\"a\":1}\n"}, {resource, ",\"b\":2}\n"}, {"", "{\"mapped\":true}\n"}, {other, "}\n"}, {resource, ",\"c\":3}\n"}}
	b := written(in, 1000)
	if n := strings.Count(string(b), resource); n != 2 { // once, and again after another head
		t.Errorf("the resource head is stored %d times, want 2", n)
	}
	got, _, _ := readAll(t, b)
	var want []string
	for _, ev := range in {
		want = append(want, ev.head+ev.own)
	}
	if !slices.Equal(got, want) {
		t.Errorf("read back\n%q\nwant\n%q", got, want)
	}
}

func TestACutOrCorruptRequestIsAnErrorNotAPanic(t *testing.T) {
	b := written([]event{{"{\"r\":1}", ",\"a\":1}\n"}, {"", "{\"b\":2}\n"}}, 100)
	for n := range len(b) {
		if _, _, _, err := Read(b[:n]); err == nil {
			t.Errorf("a request cut to %d of %d bytes was read", n, len(b))
		}
	}
	for i := len(Magic); i < len(b); i++ {
		for _, x := range []byte{0xff, 0x01, 0x80} {
			c := slices.Clone(b)
			c[i] ^= x
			_, _, _, _ = Read(c) // must not panic
		}
	}
	if Is([]byte("\x00sq\x01")) || Is([]byte("\x0a\x02")) {
		t.Error("another form taken for this one")
	}
}

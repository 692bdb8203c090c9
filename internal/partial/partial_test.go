package partial

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
)

// An offer of n counts, in its operation's end, what was taken as accepted
// and only what is left as refused.
func TestEndOpCountsTheTakenAcceptedAndTheRestRefused(t *testing.T) {
	full := errors.New("sending queue is full")
	for _, tc := range []struct {
		name           string
		n, left        int
		err            error
		accepted, refd int
	}{
		{"taken", 10, 0, nil, 10, 0},
		{"refused", 10, 10, full, 0, 10},
		{"partly taken", 10, 4, full, 6, 4},
	} {
		var accepted, refused int
		end := func(_ context.Context, _ string, n int, err error) {
			if err == nil {
				accepted += n
			} else {
				refused += n
			}
		}
		EndOp(context.Background(), end, "test", tc.n, tc.left, tc.err)
		if accepted != tc.accepted || refused != tc.refd {
			t.Errorf("%s: accepted %d, refused %d; want %d and %d", tc.name, accepted, refused, tc.accepted, tc.refd)
		}
	}
}

// Logs is the rest a partial refusal names, or all of the data.
func TestLogsIsWhatWasNotTaken(t *testing.T) {
	ld, rest := plog.NewLogs(), plog.NewLogs()
	if Logs(ld, errors.New("full")) != ld || Logs(ld, nil) != ld {
		t.Error("a whole refusal leaves all of the data")
	}
	if Logs(ld, consumererror.NewLogs(errors.New("full"), rest)) != rest {
		t.Error("a partial refusal leaves its rest")
	}
}

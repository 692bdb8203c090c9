package tick

import (
	"sync"
	"testing"
	"time"
)

func TestNextIsTheFollowingMultipleOfThePeriod(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	for _, c := range []struct{ now, want time.Duration }{
		{0, 20 * time.Millisecond},
		{time.Millisecond, 20 * time.Millisecond},
		{19_999 * time.Microsecond, 20 * time.Millisecond},
		{20 * time.Millisecond, 40 * time.Millisecond},
	} {
		if got := Next(base.Add(c.now), 20*time.Millisecond); !got.Equal(base.Add(c.want)) {
			t.Errorf("Next(+%v) = +%v, want +%v", c.now, got.Sub(base), c.want)
		}
	}
}

// clocks are the platform's clock (a timerfd on Linux) and the runtime
// timer fallback, which must behave alike.
func clocks() map[string]*timerClock {
	return map[string]*timerClock{
		"platform":     {newWaker: newWaker},
		"runtimeTimer": {newWaker: newAfterFuncWaker},
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestAMomentPassedIsClosedAtOnce(t *testing.T) {
	for name, c := range clocks() {
		if !isClosed(c.at(time.Now())) || !isClosed(c.at(time.Now().Add(-time.Hour))) {
			t.Errorf("%s: the channel of a moment passed is open", name)
		}
	}
}

func TestTheChannelClosesOnceItsMomentPassedAndNotBefore(t *testing.T) {
	for name, c := range clocks() {
		t.Run(name, func(t *testing.T) {
			for range 5 {
				due := time.Now().Add(15 * time.Millisecond)
				ch := c.at(due)
				select {
				case <-ch:
					if now := time.Now(); now.Before(due) {
						t.Fatalf("closed %v before its moment", due.Sub(now))
					}
				case <-time.After(10 * time.Second):
					t.Fatal("not closed 10 s after its moment")
				}
			}
		})
	}
}

func TestWaitersForOneMomentShareItsChannel(t *testing.T) {
	for name, c := range clocks() {
		due := time.Now().Add(time.Hour)
		if a, b := c.at(due), c.at(due.Add(0)); a != b {
			t.Errorf("%s: two channels for one moment", name)
		}
		// The same moment read from the monotonic clock and without it.
		due = time.Now().Add(time.Hour)
		if a, b := c.at(due), c.at(due.Round(0)); a != b {
			t.Errorf("%s: two channels for one moment with and without its monotonic reading", name)
		}
	}
}

func TestAnEarlierMomentAskedForLaterIsNotHeldByTheArmedOne(t *testing.T) {
	for name, c := range clocks() {
		t.Run(name, func(t *testing.T) {
			later := c.at(time.Now().Add(time.Hour))
			sooner := c.at(time.Now().Add(10 * time.Millisecond))
			select {
			case <-sooner:
			case <-time.After(10 * time.Second):
				t.Fatal("the sooner moment waited for the later one")
			}
			if isClosed(later) {
				t.Fatal("the later moment closed with the sooner one")
			}
			// And the later one stays armed: a moment between them still
			// comes.
			between := c.at(time.Now().Add(10 * time.Millisecond))
			select {
			case <-between:
			case <-time.After(10 * time.Second):
				t.Fatal("a moment asked for after a wake-up never came")
			}
		})
	}
}

func TestManyWaitersAtManyMomentsAreAllWoken(t *testing.T) {
	for name, c := range clocks() {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for i := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range 10 {
						due := Next(time.Now(), time.Duration(1+(i+j)%5)*time.Millisecond)
						<-c.at(due)
						if time.Now().Before(due) {
							t.Errorf("woken before %v", due)
						}
					}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("waiters still waiting after 30 s")
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.waiting) != 0 {
				t.Fatalf("%d moments left waiting", len(c.waiting))
			}
		})
	}
}

package steps

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// TestEventually: a value that comes to satisfy the matcher is returned;
// a poll's error ends the polling as it is; a timeout is the failure made
// of the last value seen; a cancelled scenario is its context's error.
func TestEventually(t *testing.T) {
	errPoll := errors.New("poll failed")
	errLate := errors.New("too late")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		values  []string // one per poll; the last repeats
		pollErr int      // the poll (from 1) that fails, 0 for none
		want    string
		wantErr error
	}{
		{name: "comes true", ctx: context.Background(), values: []string{"a", "b", "run"}, want: "run"},
		{name: "the poll fails", ctx: context.Background(), values: []string{"a"}, pollErr: 2, want: "a", wantErr: errPoll},
		{name: "never", ctx: context.Background(), values: []string{"a", "b"}, want: "b", wantErr: errLate},
		{name: "cancelled", ctx: cancelled, values: []string{"a"}, want: "a", wantErr: context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			get := func() (string, error) {
				n++
				if n == c.pollErr {
					return "", errPoll
				}
				return c.values[min(n, len(c.values))-1], nil
			}
			got, err := eventually(c.ctx, 500*time.Millisecond, get, gomega.Equal("run"), func(last string) error {
				if last != "b" {
					t.Errorf("the failure is made of %q, want the last value seen", last)
				}
				return errLate
			})
			if !errors.Is(err, c.wantErr) || got != c.want {
				t.Errorf("got %q, %v; want %q, %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

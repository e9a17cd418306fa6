package remote

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestForEach(t *testing.T) {
	errOdd := errors.New("odd")
	tests := []struct {
		name  string
		n     int
		limit int
		fn    func(ctx context.Context, i int) error
		want  []error
	}{
		{"none", 0, 4, func(context.Context, int) error { return nil }, []error{}},
		{"all ok", 3, 2, func(context.Context, int) error { return nil }, []error{nil, nil, nil}},
		{
			name: "errors at their index, keep going", n: 5, limit: 2,
			fn: func(_ context.Context, i int) error {
				if i%2 == 1 {
					return errOdd
				}
				return nil
			},
			want: []error{nil, errOdd, nil, errOdd, nil},
		},
		{
			name: "panic becomes an error", n: 2, limit: 0,
			fn: func(_ context.Context, i int) error {
				if i == 1 {
					panic("boom")
				}
				return nil
			},
			want: []error{nil, fmt.Errorf("panic in call 1: boom")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ForEach(t.Context(), tt.n, tt.limit, tt.fn)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(sameError)); diff != "" {
				t.Errorf("ForEach() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// sameError compares errors by identity, or by text for ones built with fmt.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return errors.Is(a, b) || a.Error() == b.Error()
}

func TestForEachLimit(t *testing.T) {
	for _, limit := range []int{1, 3, 0} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			const n = 12
			var running, peak atomic.Int32
			ForEach(t.Context(), n, limit, func(context.Context, int) error {
				r := running.Add(1)
				for {
					p := peak.Load()
					if r <= p || peak.CompareAndSwap(p, r) {
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
				running.Add(-1)
				return nil
			})
			want := int32(limit)
			if limit == 0 {
				want = n
			}
			// The limit is a bound; reaching it is likely but not certain on 2 cores.
			if got := peak.Load(); got > want {
				t.Errorf("ForEach(limit %d) ran %d calls at once, want at most %d", limit, got, want)
			}
		})
	}
}

// Calls not started when ctx ends are skipped with ctx's error.
func TestForEachCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var calls atomic.Int32
	errs := ForEach(ctx, 5, 1, func(_ context.Context, i int) error {
		calls.Add(1)
		if i == 1 {
			cancel()
			return errors.New("fail fast")
		}
		return nil
	})
	if got := calls.Load(); got != 2 {
		t.Errorf("ForEach() made %d calls, want 2 (the rest skipped after cancel)", got)
	}
	want := []error{nil, errors.New("fail fast"), context.Canceled, context.Canceled, context.Canceled}
	if diff := cmp.Diff(want, errs, cmp.Comparer(sameError), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ForEach() mismatch (-want +got):\n%s", diff)
	}
}

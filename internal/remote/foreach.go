package remote

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// ForEach calls fn(ctx, i) for i in [0, n) with at most limit calls running at
// once (limit <= 0: no limit) and returns the error of each call at its index,
// so the caller can report per host in a deterministic order. The slice always
// has n entries (nil = success); errors.Join(errs...) is nil when all
// succeeded. It keeps going after a failure (the default
// fabricctl wants for plan, diff and apply); for fail-fast, cancel ctx from fn.
// Calls not yet started when ctx ends are not made: their error is ctx's. A
// panic in fn is returned as that index's error.
func ForEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) []error {
	if n <= 0 {
		return []error{}
	}
	errs := make([]error, n)
	var g errgroup.Group
	if limit > 0 {
		g.SetLimit(limit)
	}
	for i := range n {
		if ctx.Err() != nil {
			for j := i; j < n; j++ {
				errs[j] = context.Cause(ctx)
			}
			break
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				errs[i] = context.Cause(ctx)
				return nil
			}
			errs[i] = call(ctx, i, fn)
			return nil
		})
	}
	_ = g.Wait()
	return errs
}

func call(ctx context.Context, i int, fn func(context.Context, int) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in call %d: %v", i, r)
		}
	}()
	return fn(ctx, i)
}

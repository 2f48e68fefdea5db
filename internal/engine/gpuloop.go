package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/linecheck/linecheck/internal/gpu"
)

// This file is serve's GPU sampler (serve --gpu-every).

// GPUSampler takes one sample of every card (nvidia-smi in serve; tests
// inject a replay).
type GPUSampler func(ctx context.Context) ([]gpu.Sample, error)

// GPULoop samples every Every until ctx ends, handing each sample (or the
// error of a failed one, also written to log) to observe (serve: its GPU
// metrics); the first sample is taken at once.
func GPULoop(ctx context.Context, every time.Duration, sample GPUSampler, observe func([]gpu.Sample, error), log io.Writer) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s, err := sample(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil && log != nil {
			fmt.Fprintf(log, "linecheck serve: GPU sample: %v\n", err)
		}
		observe(s, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

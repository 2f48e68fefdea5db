package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/exporter"
	"github.com/linecheck/linecheck/internal/gpu"
)

// serveGPUHelp is the part of serve --help about GPU samples.
const serveGPUHelp = `

GPUs (--gpu-every D, default off): on a GPU server, every D serve samples
every card with nvidia-smi (the query of linecheck gpu --watch) and exports,
labelled gpu (the index) and uuid:
  linecheck_gpu_temperature_celsius, linecheck_gpu_power_watts,
  linecheck_gpu_power_limit_watts, linecheck_gpu_sm_clock_hertz,
  linecheck_gpu_memory_clock_hertz, linecheck_gpu_utilization_ratio,
  linecheck_gpu_ecc_uncorrected_volatile   gauges of the last sample
  linecheck_gpu_throttled{reason}          1 while the last sample holds it
  linecheck_gpu_samples_total, linecheck_gpu_throttled_samples_total{reason}
                                           counters: rate(…{reason="any"}[1h]) /
                                           rate(linecheck_gpu_samples_total[1h]) is
                                           the share of time throttled
  linecheck_gpu_sample_errors_total        nvidia-smi runs that failed`

// startServeGPU runs the GPU sampling loop of serve --gpu-every in wg.
func startServeGPU(ctx context.Context, wg *sync.WaitGroup, exp *exporter.Exporter, every time.Duration, log io.Writer) error {
	if every < time.Second {
		return fmt.Errorf("--gpu-every %v: at least 1s (each sample runs nvidia-smi)", every)
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return errors.New("--gpu-every: nvidia-smi not found: serve exports GPU metrics only on the GPU server, where the NVIDIA driver is installed")
	}
	m := exporter.NewGPUMetrics(exp.Registry())
	wg.Add(1)
	go func() {
		defer wg.Done()
		engine.GPULoop(ctx, every, func(ctx context.Context) ([]gpu.Sample, error) { return sampleGPUs(ctx, "nvidia-smi") }, m.Observe, log)
	}()
	return nil
}

package exporter

import (
	"strconv"

	"github.com/linecheck/linecheck/internal/gpu"
)

// GPUMetrics are the GPU metrics of serve --gpu-every, one series per card
// (labels gpu = the index, uuid):
//
//	linecheck_gpu_temperature_celsius          gauge, last sample
//	linecheck_gpu_power_watts                  gauge, the draw
//	linecheck_gpu_power_limit_watts            gauge, the limit in force
//	linecheck_gpu_sm_clock_hertz               gauge
//	linecheck_gpu_memory_clock_hertz           gauge
//	linecheck_gpu_utilization_ratio            gauge, 0..1
//	linecheck_gpu_ecc_uncorrected_volatile     gauge, the driver's count since load
//	linecheck_gpu_throttled{reason}            gauge, 1 while the last sample holds the reason
//	linecheck_gpu_samples_total                counter
//	linecheck_gpu_throttled_samples_total{reason} counter (reason "any" for any throttling reason)
//	linecheck_gpu_sample_errors_total          counter, nvidia-smi runs that failed (no labels)
//
// The share of time throttled over a window is
// rate(linecheck_gpu_throttled_samples_total{reason="any"}[1h]) /
// rate(linecheck_gpu_samples_total[1h]), as gpu --report computes it. A
// figure the driver does not give leaves its gauge absent.
type GPUMetrics struct {
	temp, power, limit, sm, mem, util, ecc, throttled GaugeVec
	samples, throttledSamples, errors                 CounterVec
}

var gpuLabels = []string{"gpu", "uuid"}

// NewGPUMetrics registers the GPU metrics with reg.
func NewGPUMetrics(reg *Registry) *GPUMetrics {
	withReason := append(append([]string{}, gpuLabels...), "reason")
	return &GPUMetrics{
		temp:             reg.NewGaugeVec("linecheck_gpu_temperature_celsius", "GPU temperature of the last sample (nvidia-smi temperature.gpu), in °C.", gpuLabels...),
		power:            reg.NewGaugeVec("linecheck_gpu_power_watts", "GPU power draw of the last sample, in W.", gpuLabels...),
		limit:            reg.NewGaugeVec("linecheck_gpu_power_limit_watts", "GPU power limit in force, in W.", gpuLabels...),
		sm:               reg.NewGaugeVec("linecheck_gpu_sm_clock_hertz", "SM clock of the last sample, in Hz.", gpuLabels...),
		mem:              reg.NewGaugeVec("linecheck_gpu_memory_clock_hertz", "Memory clock of the last sample, in Hz.", gpuLabels...),
		util:             reg.NewGaugeVec("linecheck_gpu_utilization_ratio", "GPU utilisation of the last sample, 0 to 1.", gpuLabels...),
		ecc:              reg.NewGaugeVec("linecheck_gpu_ecc_uncorrected_volatile", "Uncorrected ECC errors the driver counted since it loaded.", gpuLabels...),
		throttled:        reg.NewGaugeVec("linecheck_gpu_throttled", "1 while the last sample holds this throttling reason (sw_power_cap, hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown), else 0.", withReason...),
		samples:          reg.NewCounterVec("linecheck_gpu_samples_total", "GPU samples taken (serve --gpu-every).", gpuLabels...),
		throttledSamples: reg.NewCounterVec("linecheck_gpu_throttled_samples_total", "GPU samples holding a throttling reason (reason any: one of them).", withReason...),
		errors:           reg.NewCounterVec("linecheck_gpu_sample_errors_total", "GPU samples that failed (nvidia-smi did not answer or was not understood)."),
	}
}

// Observe records one sampling run; err counts an error.
func (m *GPUMetrics) Observe(samples []gpu.Sample, err error) {
	if err != nil {
		m.errors.WithLabelValues().Inc()
		return
	}
	for _, s := range samples {
		l := []string{strconv.Itoa(s.Index), s.UUID}
		set := func(g GaugeVec, v *float64, scale float64) {
			if v != nil {
				g.WithLabelValues(l...).Set(*v * scale)
			}
		}
		set(m.temp, s.TempC, 1)
		set(m.power, s.PowerW, 1)
		set(m.limit, s.PowerLimitW, 1)
		set(m.sm, s.SMClockMHz, 1e6)
		set(m.mem, s.MemClockMHz, 1e6)
		set(m.util, s.UtilGPU, 0.01)
		set(m.ecc, s.ECCUncorrected, 1)
		m.samples.WithLabelValues(l...).Inc()
		if s.Reasons == nil {
			continue
		}
		for _, r := range gpu.Throttling {
			on := 0.0
			if *s.Reasons&r.Bit != 0 {
				on = 1
				m.throttledSamples.WithLabelValues(l[0], l[1], r.Name).Inc()
			}
			m.throttled.WithLabelValues(l[0], l[1], r.Name).Set(on)
		}
		if *s.Reasons&gpu.ThrottleMask != 0 {
			m.throttledSamples.WithLabelValues(l[0], l[1], "any").Inc()
		} else {
			m.throttledSamples.WithLabelValues(l[0], l[1], "any").Add(0)
		}
	}
}

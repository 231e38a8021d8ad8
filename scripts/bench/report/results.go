package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// sample is one timed command: how long it took and, over the provider processes it started
// (none for commands that start no provider), the largest peak RSS, the CPU time they used
// together and how many there were.
type sample struct {
	seconds    float64
	rssKiB     float64
	cpuSeconds float64
	processes  float64
	// requests and bytes are what the command asked through the tunnel and received from it;
	// counted says they were counted (only commands measured through the tunnel are).
	requests, bytes float64
	counted         bool
}

// results holds every sample by chart size and metric.
type results struct {
	samples map[int]map[string][]sample
}

// parseResults reads the tab-separated lines scripts/bench.sh writes: size, metric, run, seconds,
// peak provider RSS in KiB, provider CPU seconds, provider processes, and optionally the
// requests made and the bytes received through the tunnel ("-" when not counted).
func parseResults(r io.Reader) (*results, error) {
	res := &results{samples: map[int]map[string][]sample{}}
	scanner := bufio.NewScanner(r)
	line := 0
	for scanner.Scan() {
		line++
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 7 && len(fields) != 9 {
			return nil, fmt.Errorf("results line %d: want 7 or 9 tab-separated fields, got %d", line, len(fields))
		}
		size, err := strconv.Atoi(fields[0])
		if err != nil {
			return nil, fmt.Errorf("results line %d: size: %w", line, err)
		}
		var numbers [4]float64
		for i, name := range []string{"seconds", "rss", "cpu", "processes"} {
			numbers[i], err = strconv.ParseFloat(fields[3+i], 64)
			if err != nil {
				return nil, fmt.Errorf("results line %d: %s: %w", line, name, err)
			}
		}
		s := sample{seconds: numbers[0], rssKiB: numbers[1], cpuSeconds: numbers[2], processes: numbers[3]}
		if len(fields) == 9 && (fields[7] != "-" || fields[8] != "-") {
			s.counted = true
			if s.requests, err = strconv.ParseFloat(fields[7], 64); err == nil {
				s.bytes, err = strconv.ParseFloat(fields[8], 64)
			}
			if err != nil {
				return nil, fmt.Errorf("results line %d: requests and bytes: %w", line, err)
			}
		}
		res.add(size, fields[1], s)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return res, nil
}

func (r *results) add(size int, metric string, s sample) {
	if r.samples[size] == nil {
		r.samples[size] = map[string][]sample{}
	}
	r.samples[size][metric] = append(r.samples[size][metric], s)
}

// sizes returns the chart sizes that have samples, smallest first.
func (r *results) sizes() []int {
	out := make([]int, 0, len(r.samples))
	for size := range r.samples {
		out = append(out, size)
	}
	sort.Ints(out)
	return out
}

// tableSizes returns the sizes that have samples other than failure detection's, which runs on
// a small chart of its own and has a table of its own.
func (r *results) tableSizes() []int {
	var out []int
	for _, size := range r.sizes() {
		for metric := range r.samples[size] {
			if !strings.HasSuffix(metric, "_failure") {
				out = append(out, size)
				break
			}
		}
	}
	return out
}

// stat summarizes one metric at one size.
type stat struct {
	n                  int
	median, min, max   float64
	rssMedian, rssPeak float64
	cpuMedian          float64
	processesMedian    float64
	hasSamples, hasRSS bool
	// requestsMedian and bytesMedian: over the counted samples (hasCounts).
	requestsMedian, bytesMedian float64
	hasCounts                   bool
}

func (r *results) stat(size int, metric string) stat {
	samples := r.samples[size][metric]
	if len(samples) == 0 {
		return stat{}
	}
	secs := make([]float64, len(samples))
	rss := make([]float64, 0, len(samples))
	cpu := make([]float64, 0, len(samples))
	processes := make([]float64, 0, len(samples))
	var requests, bytes []float64
	for i, s := range samples {
		secs[i] = s.seconds
		if s.counted {
			requests = append(requests, s.requests)
			bytes = append(bytes, s.bytes)
		}
		if s.processes > 0 {
			rss = append(rss, s.rssKiB)
			cpu = append(cpu, s.cpuSeconds)
			processes = append(processes, s.processes)
		}
	}
	st := stat{n: len(samples), hasSamples: true, median: median(secs), min: minOf(secs), max: maxOf(secs)}
	if len(rss) > 0 {
		st.hasRSS = true
		st.rssMedian = median(rss)
		st.rssPeak = maxOf(rss)
		st.cpuMedian = median(cpu)
		st.processesMedian = median(processes)
	}
	if len(requests) > 0 {
		st.hasCounts = true
		st.requestsMedian = median(requests)
		st.bytesMedian = median(bytes)
	}
	return st
}

// median of a non-empty slice; the mean of the middle two for an even count.
func median(values []float64) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[mid]
	}
	return (sorted[mid-1] + sorted[mid]) / 2
}

func minOf(values []float64) float64 {
	m := math.Inf(1)
	for _, v := range values {
		m = math.Min(m, v)
	}
	return m
}

func maxOf(values []float64) float64 {
	m := math.Inf(-1)
	for _, v := range values {
		m = math.Max(m, v)
	}
	return m
}

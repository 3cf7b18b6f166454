package main

// pickup --version as a process: pickup's start-up cost alone (the Go
// runtime, the init of every package it links, building the one command
// line it needs), which every Claude Code hook pays. With -base, before and
// after a change in the same rounds (the live board's libraries must stay
// out of it: pickup board hands over to pickup-board).

import "fmt"

func init() {
	measurements = append(measurements, measurement{"version", versionProcess})
}

func versionProcess(e *env) (Row, error) {
	const limit = 1.02 // of the base's median
	row := Row{What: fmt.Sprintf("pickup --version as a process, %d trials (start-up only; fsync plays no part)", e.trials),
		Target: "median <= 1.02 x the base's (-base, BENCH_BASE), in the same rounds"}
	run, err := interleave(e, 1, func(bin string) ([]procResult, error) {
		r, err := runBin(e, bin, "--version")
		return []procResult{r}, err
	})
	if err != nil {
		return row, err
	}
	row.Figure = e.figure(run, []string{""})
	row.Result = "INFO" // without a base there is nothing to compare with
	if len(run.steps) == 2 {
		row.Result = "PASS"
		if float64(run.steps[0][0].median()) > limit*float64(run.steps[1][0].median()) {
			row.Result = "MISS"
		}
	}
	return row, nil
}

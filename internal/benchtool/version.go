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
	const limit = 2
	row := Row{What: fmt.Sprintf("pickup --version as a process, %d trials (start-up only; fsync plays no part)", e.trials), Target: ratioTarget(limit)}
	run, err := interleave(e, 1, func(bin string) ([]procResult, error) {
		r, err := runBin(e, bin, "--version")
		return []procResult{r}, err
	})
	if err != nil {
		return row, err
	}
	row.Figure = e.figure(run, []string{""})
	row.Result = ratioResult(run, 1, limit)
	return row, nil
}

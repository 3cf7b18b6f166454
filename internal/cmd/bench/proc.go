package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// --- processes and figures --------------------------------------------------

// rssEnv makes the driver run the command in its arguments and report the
// command's peak RSS (see peakRSS).
const rssEnv = "BENCHTOOL_RSS"

// rssPrefix starts the line on which reportChildRSS reports.
const rssPrefix = "benchtool: peak RSS KiB: "

// peakRSS runs pickup with args once, through a fresh copy of this driver,
// and returns pickup's peak RSS in KiB. Not directly: a child started from
// this driver inherits its high-water mark (ru_maxrss survives exec, and
// this driver holds the boards it wrote), so the figure would be the
// driver's own whenever it is the larger.
func peakRSS(e *env, bin string, args ...string) (int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append([]string{bin}, args...)...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PICKUP_") }), rssEnv+"=1")
	cmd.Stdout = e.devnull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("pickup %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	_, after, ok := strings.Cut(stderr.String(), rssPrefix)
	if !ok {
		return 0, fmt.Errorf("pickup %s: no peak RSS reported: %s", strings.Join(args, " "), stderr.String())
	}
	return strconv.ParseInt(strings.TrimSpace(after), 10, 64)
}

// reportChildRSS runs argv, then prints its peak RSS on stderr and returns
// its exit code: this process is small, so the child inherits no big
// high-water mark from it.
func reportChildRSS(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kib := int64(ru.Maxrss)
		if runtime.GOOS == "darwin" {
			kib /= 1024 // bytes there
		}
		fmt.Fprintf(os.Stderr, "\n%s%d\n", rssPrefix, kib)
	}
	return cmd.ProcessState.ExitCode()
}

type procResult struct {
	wall time.Duration
	cpu  time.Duration // user + system
}

// runProc runs the pickup binary with args, stdout to /dev/null, and
// returns its wall time (from before fork to after wait) and CPU time. The
// environment is the driver's without PICKUP_* variables, so fsync is on
// unless args say --no-sync.
func runProc(e *env, args ...string) (procResult, error) {
	return runCmd(e, exec.Command(e.bin, args...))
}

func runCmd(e *env, cmd *exec.Cmd) (procResult, error) {
	args := cmd.Args[1:]
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PICKUP_") })
	cmd.Stdout = e.devnull // an *os.File: no copying goroutine
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return procResult{}, fmt.Errorf("pickup %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return procResult{}, err
	}
	r := procResult{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond)) }

// count formats a rate with thousands separators.
func count(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/chromedp/chromedp"
)

// Where the CPU of a drain goes, without perf: the clock ticks (1/100 s)
// of the processes from /proc/PID/stat. Only this test's own descendants
// are counted (the machine is shared: another helper's chromium is not
// ours).

// cpuSplit is CPU time in clock ticks, by who spent it.
type cpuSplit struct {
	server    int // pickup serve
	renderers int // chromium's renderers: the pages' script, DOM, style, layout
	browser   int // chromium's browser process: the network, the IPC to the renderers
	chromium  int // chromium's other processes (gpu, zygote, utility)
	test      int // this test process (chromedp; TestLoadStreams: the stream readers)
	agents    int // the pickup work processes, once waited for
}

func (a cpuSplit) minus(b cpuSplit) cpuSplit {
	return cpuSplit{a.server - b.server, a.renderers - b.renderers, a.browser - b.browser, a.chromium - b.chromium, a.test - b.test, a.agents - b.agents}
}

func (a cpuSplit) plus(b cpuSplit) cpuSplit {
	return cpuSplit{a.server + b.server, a.renderers + b.renderers, a.browser + b.browser, a.chromium + b.chromium, a.test + b.test, a.agents + b.agents}
}

func (a cpuSplit) String() string {
	s := func(ticks int) string { return strconv.FormatFloat(float64(ticks)/100, 'f', 2, 64) + " s" }
	return fmt.Sprintf("server %s, chromium renderers %s, chromium browser %s, chromium other %s, test process %s, agents %s",
		s(a.server), s(a.renderers), s(a.browser), s(a.chromium), s(a.test), s(a.agents))
}

// procStat is one process's parent, name and ticks (own; and of its
// children waited for).
type procStat struct {
	pid, ppid    int
	comm         string
	ticks, child int
}

func readStat(pid string) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(s[end+2:])
	if len(f) < 15 {
		return procStat{}, false
	}
	n := func(i int) int { v, _ := strconv.Atoi(f[i]); return v }
	p, _ := strconv.Atoi(pid)
	return procStat{pid: p, ppid: n(1), comm: s[open+1 : end], ticks: n(11) + n(12), child: n(13) + n(14)}, true
}

// procs reads every process's stat.
func procs() map[int]procStat {
	all := map[int]procStat{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if p, ok := readStat(d.Name()); ok {
			all[p.pid] = p
		}
	}
	return all
}

// ourChromium is the chromium processes among all that descend from this
// process.
func ourChromium(all map[int]procStat) []procStat {
	self := os.Getpid()
	var out []procStat
	for _, p := range all {
		if !strings.HasPrefix(p.comm, "chrom") {
			continue
		}
		for q, i := p.ppid, 0; i < 64 && q > 1; i++ {
			if q == self {
				out = append(out, p)
				break
			}
			q = all[q].ppid
		}
	}
	return out
}

// sampleCPU reads the ticks of this process, of server and of the
// chromium processes descending from this one.
func sampleCPU(server int) cpuSplit {
	all := procs()
	var c cpuSplit
	me := all[os.Getpid()]
	c.test, c.agents, c.server = me.ticks, me.child, all[server].ticks
	for _, p := range ourChromium(all) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
		switch {
		case strings.Contains(string(cmd), "--type=renderer"):
			c.renderers += p.ticks
		case !strings.Contains(string(cmd), "--type="):
			c.browser += p.ticks
		default:
			c.chromium += p.ticks
		}
	}
	return c
}

// signalBrowsers sends sig to every chromium process descending from this
// one: SIGSTOP takes the pages off the machine for a drain alone (the
// same pages, sleeping), SIGCONT gives them back.
func signalBrowsers(sig syscall.Signal) {
	for _, p := range ourChromium(procs()) {
		_ = syscall.Kill(p.pid, sig)
	}
}

// browserPid is the process of the browser of ctx.
func browserPid(ctx context.Context) int {
	return chromedp.FromContext(ctx).Browser.Process().Pid
}

// signalSet sends sig to every chromium process of the browsers whose
// pids are in browsers (the browser and the processes it started), and to
// no other: the browsers of one kind of page sleep while another kind's
// drain is timed.
func signalSet(browsers map[int]bool, sig syscall.Signal) {
	all := procs()
	for _, p := range ourChromium(all) {
		for q, i := p.pid, 0; i < 64 && q > 1; i++ {
			if browsers[q] {
				_ = syscall.Kill(p.pid, sig)
				break
			}
			q = all[q].ppid
		}
	}
}

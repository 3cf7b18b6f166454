package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestInvokersTerminal walks fake process trees of jobs started from an
// interactive shell. Standard input is /dev/null, a character device whose
// number the fake stat gives as the controlling terminal: the rule compares
// the two devices, whatever they are.
func TestInvokersTerminal(t *testing.T) {
	info, err := os.Stat("/dev/null")
	if err != nil {
		t.Skip(err)
	}
	tty := uint64(info.Sys().(*syscall.Stat_t).Rdev)
	const self = 1000
	type p struct {
		pid, ppid, pgrp, sid int
		exe, cmdline         string
		tty                  uint64
		stdin                string // fd 0's target; "" none
	}
	const bashI, tmux = 500, 400
	prompt := p{bashI, tmux, bashI, bashI, "/usr/bin/bash", "-bash", tty, "/dev/null"}
	server := p{tmux, 1, tmux, tmux, "/usr/bin/tmux", "tmux", 0, ""}
	tests := []struct {
		name  string
		procs []p
		want  []int
		why   []string
	}{
		{"a script started from the prompt: the script, not the prompt", []p{
			{self, 40, 30, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{40, 30, 30, bashI, "/usr/bin/bash", "/bin/bash ./agent.sh", tty, "/dev/null"}, // $( ... )
			{30, bashI, 30, bashI, "/usr/bin/bash", "/bin/bash ./agent.sh", tty, "/dev/null"},
			prompt, server,
		}, []int{40, 30}, []string{WhyShell, WhyShell}},
		{"pickup typed at the prompt: the prompt's shell, not tmux", []p{
			{self, bashI, self, bashI, "/usr/bin/pickup", "pickup claim X", tty, "/dev/null"},
			prompt, server,
		}, []int{bashI}, []string{WhyPrompt}},
		{"a command substitution typed at the prompt is the prompt's", []p{
			{self, 40, bashI, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{40, bashI, bashI, bashI, "/usr/bin/bash", "-bash", tty, "/dev/null"},
			prompt, server,
		}, []int{40, bashI}, []string{WhyShell, WhyPrompt}},
		{"a wrapper typed at the prompt: the prompt too", []p{
			{self, 40, 40, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{40, bashI, 40, bashI, "/usr/bin/timeout", "timeout 9 pickup next", tty, "/dev/null"},
			prompt, server,
		}, []int{40, bashI}, []string{WhyWrapper, WhyPrompt}},
		{"xargs -P of sh -c from the prompt: the job's", []p{
			{self, 41, 40, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{41, 40, 40, bashI, "/usr/bin/dash", "sh -c pickup next; sleep 9", tty, "/dev/null"},
			{40, bashI, 40, bashI, "/usr/bin/xargs", "xargs -P 4 sh -c ...", tty, "/dev/null"},
			prompt, server,
		}, []int{41, 40}, []string{WhyShell, WhyWrapper}},
		{"a script whose stdin is not the terminal is no prompt", []p{
			{self, 30, 30, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{30, 20, 30, bashI, "/usr/bin/bash", "bash", tty, ""},
			{20, 1, 20, 20, "/usr/sbin/cron", "cron", 0, ""},
		}, []int{30, 20}, []string{WhyShell, WhyProgram}},
		{"a shell with a script operand is no prompt", []p{
			{self, 30, 30, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{30, 20, 30, bashI, "/usr/bin/bash", "bash --norc ./supervise.sh", tty, "/dev/null"},
			{20, 1, 20, 20, "/usr/bin/python3", "python3", 0, ""},
		}, []int{30, 20}, []string{WhyShell, WhyProgram}},
		{"sh -c is no prompt", []p{
			{self, 30, 30, 30, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{30, tmux, 30, 30, "/usr/bin/dash", "sh -c ./agent.sh", tty, "/dev/null"},
			server,
		}, []int{30, tmux}, []string{WhyShell, WhyProgram}},
		{"a shell that does not lead its group is no prompt", []p{
			{self, 30, 30, bashI, "/usr/bin/pickup", "pickup next", tty, "/dev/null"},
			{30, 20, 20, bashI, "/usr/bin/bash", "bash -i", tty, "/dev/null"},
			{20, 1, 20, 20, "/usr/bin/node", "node", 0, ""},
		}, []int{30, 20}, []string{WhyShell, WhyProgram}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeProc(t, self, 4026532000)
			for _, q := range tt.procs {
				f.write(strconv.Itoa(q.pid)+"/stat", strconv.Itoa(q.pid)+" (x) S "+strconv.Itoa(q.ppid)+" "+
					strconv.Itoa(q.pgrp)+" "+strconv.Itoa(q.sid)+" "+strconv.FormatUint(q.tty, 10)+
					" 8 9 10 11 12 13 14 15 16 17 18 19 20 21 "+strconv.Itoa(q.pid*7)+" 23\n")
				f.link(strconv.Itoa(q.pid)+"/exe", q.exe)
				f.write(strconv.Itoa(q.pid)+"/cmdline", strings.ReplaceAll(q.cmdline, " ", "\x00")+"\x00")
				if q.stdin != "" {
					f.link(strconv.Itoa(q.pid)+"/fd/0", q.stdin)
				}
			}
			got := f.env(self).Invokers()
			var pids []int
			var whys []string
			for _, q := range got {
				pids = append(pids, q.PID)
				whys = append(whys, q.Why)
			}
			if !equalInts(pids, tt.want) || strings.Join(whys, "|") != strings.Join(tt.why, "|") {
				t.Errorf("Invokers = %v %q, want %v %q", pids, whys, tt.want, tt.why)
			}
		})
	}
}

func TestReadsInput(t *testing.T) {
	for args, want := range map[string]bool{
		"-bash": true, "bash": true, "bash -i": true, "bash --norc -i": true, "zsh -l": true,
		"dash -i": true, "bash --rcfile /tmp/rc -i": true, "bash -o vi": true, "bash -s a b": true,
		"bash ./agent.sh": false, "bash -c ls": false, "bash -lc ls": false, "sh -- x": false,
		"bash --rcfile": true, "bash -": false, "": false,
	} {
		if got := readsInput(strings.Split(args, " ")); got != want {
			t.Errorf("readsInput(%q) = %v, want %v", args, got, want)
		}
	}
}

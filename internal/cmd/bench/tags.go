package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// --- pickup next --tag: a filtered next as fast as an unfiltered one ------

// tagCount is how many tags the tag board spreads its sessions over.
const tagCount = 10

// nextTagProcess times `pickup next --tag tag3` against `pickup next` on a
// board of n todo sessions, each carrying one of tagCount tags (session i
// has tag<i%10>), and an empty Go program, interleaved trial by trial so
// that the three series see the same machine. Each claimed session is
// released with the library, untimed, and checked: the filtered next must
// have taken a session with the tag. The target: the filtered median within
// 10% of the unfiltered one.
func nextTagProcess(e *env, n int, noSync bool) (Row, error) {
	mode := "fsync on"
	if noSync {
		mode = "fsync off (--no-sync)"
	}
	const want = "tag3"
	row := Row{
		What:   fmt.Sprintf("pickup next --tag %s vs pickup next, %d todo with %d tags, %s, %d trials each", want, n, tagCount, mode, e.trials),
		Target: "filtered median <= 1.10 × unfiltered",
	}
	if e.goFloor == "" {
		return row, fmt.Errorf("needs -go-floor (scripts/bench builds it)")
	}
	b, err := benchkit.NewBoard(e.dir(fmt.Sprintf("next-tag-%d", n)))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	if err := fillTagged(b, n); err != nil {
		return row, err
	}
	const owner = "bench-next-tag"
	c, err := claim.New(b, owner)
	if err != nil {
		return row, err
	}
	plain := []string{"--dir", b.Dir, "--owner", owner, "next"}
	if noSync {
		plain = append(plain, "--no-sync")
	}
	filtered := append(slices.Clone(plain), "--tag", want)
	trial := func(args []string, tag string) (procResult, error) {
		r, err := runProc(e, args...)
		if err != nil {
			return r, err
		}
		held, err := b.ListOwner(owner)
		if err != nil {
			return r, err
		}
		if len(held) != 1 {
			return r, fmt.Errorf("after pickup next the owner holds %d sessions", len(held))
		}
		if tag != "" && !slices.Contains(held[0].Tags, tag) {
			return r, fmt.Errorf("pickup next --tag %s took %s, tagged %v", tag, held[0].ID, held[0].Tags)
		}
		_, err = c.Release(context.Background(), held[0].ID)
		return r, err
	}
	for range 3 { // warm the cache, the binary and the page cache
		if _, err := trial(plain, ""); err != nil {
			return row, err
		}
		if _, err := trial(filtered, want); err != nil {
			return row, err
		}
	}
	var plainWall, tagWall, floorWall, plainCPU, tagCPU []time.Duration
	for range e.trials {
		r, err := trial(plain, "")
		if err != nil {
			return row, err
		}
		plainWall, plainCPU = append(plainWall, r.wall), append(plainCPU, r.cpu)
		if r, err = trial(filtered, want); err != nil {
			return row, err
		}
		tagWall, tagCPU = append(tagWall, r.wall), append(tagCPU, r.cpu)
		if r, err = runCmd(e, exec.Command(e.goFloor)); err != nil {
			return row, err
		}
		floorWall = append(floorWall, r.wall)
	}
	for _, l := range [][]time.Duration{plainWall, tagWall, floorWall, plainCPU, tagCPU} {
		slices.Sort(l)
	}
	med := func(l []time.Duration) time.Duration { return percentile(l, 0.5) }
	floor := med(floorWall)
	times := func(d time.Duration) string { return fmt.Sprintf("%.2f×", float64(d)/float64(floor)) }
	row.Figure = fmt.Sprintf("unfiltered median %s = %s floor (p90 %s, cpu %s); --tag median %s = %s floor (p90 %s, cpu %s); filtered/unfiltered %.3f (cpu %.3f); floor (empty Go program, same run) %s",
		ms(med(plainWall)), times(med(plainWall)), ms(percentile(plainWall, 0.9)), ms(med(plainCPU)),
		ms(med(tagWall)), times(med(tagWall)), ms(percentile(tagWall, 0.9)), ms(med(tagCPU)),
		float64(med(tagWall))/float64(med(plainWall)), float64(med(tagCPU))/float64(med(plainCPU)), ms(floor))
	row.Result = passIf(float64(med(tagWall)) <= 1.10*float64(med(plainWall)))
	return row, nil
}

// fillTagged writes n todo sessions like benchkit.Fill, session i tagged
// tag<i%tagCount>.
func fillTagged(b *sessions.Board, n int) error {
	dir := b.StateDir(sessions.Todo, "")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prios := [...]sessions.Priority{sessions.Medium, sessions.High, sessions.Medium, sessions.Low}
	for i := range n {
		m := sessions.Meta{
			Priority:  prios[i%len(prios)],
			CreatedAt: benchkit.Epoch.Add(time.Duration(i) * time.Second),
			Title:     fmt.Sprintf("Bench session %d: make the thing faster", i),
			Tags:      []string{fmt.Sprintf("tag%d", i%tagCount)},
		}
		body := fmt.Sprintf("# Bench session %d\n\nNotes: nothing here is read by listing; it only makes the file a realistic size.\n", i)
		if err := os.WriteFile(filepath.Join(dir, benchkit.ID(i)+".md"), sessions.Render(m, []byte(body)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

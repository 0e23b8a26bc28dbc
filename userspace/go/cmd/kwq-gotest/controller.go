// SPDX-License-Identifier: LGPL-2.1-or-later

// The controller restart case: a controller process (this program,
// "kwq-gotest controller QUEUE LOG") SIGKILLed in the middle of its
// reconciles and during ShutDownWithDrain, restarted, and restarted
// cleanly after a ShutDown, must reconcile every key, none in two workers
// at once, none again once done.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"kwq.dev/kwq"
)

// controllerConfig is the Config every start of the controller and the
// test's producer use.
func controllerConfig(name string) kwq.Config {
	return kwq.Config{Name: name, RateLimiter: kwq.DefaultControllerRateLimiter(),
		ErrorHandler: func(err error) { fmt.Fprintf(os.Stderr, "controller: %v\n", err) }}
}

// slowKey: the reconcile of every tenth key takes 200 ms, so that a kill
// finds reconciles under way (the others take 1 ms).
func slowKey(key string) bool { return strings.HasSuffix(key, "0") }

// controllerMain is the controller: workers in sample-controller's
// shape, each reconcile logged to log ("begin KEY PID", "end KEY PID",
// "done KEY PID" after its Done) with single O_APPEND writes that
// survive a SIGKILL. SIGTERM: ShutDownWithDrain ("drain PID",
// "drained PID"); SIGINT: ShutDown ("stopped PID"); then it exits.
func controllerMain(name, logPath string) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	pid := os.Getpid()
	logf := func(what, key string) {
		f.WriteString(fmt.Sprintf("%s %s %d\n", what, key, pid))
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	q, err := kwq.New(controllerConfig(name))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if q.ShuttingDown() {
		fmt.Println("error the queue is shut down at the start")
		os.Exit(1)
	}
	var mu sync.Mutex
	busy := map[string]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shut := q.Get()
				if shut {
					return
				}
				mu.Lock()
				if busy[key] {
					logf("overlap", key)
				}
				busy[key] = true
				mu.Unlock()
				logf("begin", key)
				// The test's hold file keeps a reconcile begun while it
				// exists from ending: a drain then has a key to wait for.
				for held(logPath) {
					time.Sleep(5 * time.Millisecond)
				}
				if slowKey(key) {
					time.Sleep(200 * time.Millisecond)
				} else {
					time.Sleep(time.Millisecond)
				}
				logf("end", key)
				mu.Lock()
				delete(busy, key)
				mu.Unlock()
				q.Forget(key)
				q.Done(key)
				logf("done", key)
			}
		}()
	}
	fmt.Println("ready")
	sig := <-sigs
	if sig == syscall.SIGTERM {
		logf("drain", "-")
		q.ShutDownWithDrain()
		logf("drained", "-")
	} else {
		q.ShutDown()
		logf("stopped", "-")
	}
	wg.Wait()
	if err := q.Err(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// held reports whether the test holds the reconciles (holdPath).
func held(logPath string) bool {
	_, err := os.Stat(holdPath(logPath))
	return err == nil
}

func holdPath(logPath string) string { return logPath + ".hold" }

// ctlRun is one start of the controller.
type ctlRun struct {
	cmd *exec.Cmd
	pid int
}

func startController(name, logPath string) (*ctlRun, error) {
	cmd := exec.Command("/proc/self/exe", "controller", name, logPath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errorf("the controller did not start: %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
			fmt.Printf("    # controller %d: %s\n", cmd.Process.Pid, sc.Text())
		}
	}()
	return &ctlRun{cmd: cmd, pid: cmd.Process.Pid}, nil
}

// until waits until cond holds for the log (waitLog); if it does not,
// it kills r.
func (r *ctlRun) until(logPath, what string, cond func([][]string) bool) error {
	err := waitLog(logPath, what, cond)
	if err != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
	return err
}

// startUntil starts the controller and waits until cond holds (until).
func startUntil(name, logPath, what string, cond func([][]string) bool) (*ctlRun, error) {
	r, err := startController(name, logPath)
	if err != nil {
		return nil, err
	}
	return r, r.until(logPath, what, cond)
}

// ctlLog is the log's lines so far.
func ctlLog(logPath string) ([][]string, error) {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return nil, err
	}
	var lines [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, f)
		}
	}
	return lines, nil
}

// waitLog waits until cond holds for the log (at most 40 s).
func waitLog(logPath, what string, cond func([][]string) bool) error {
	for end := time.Now().Add(40 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		lines, err := ctlLog(logPath)
		if err != nil {
			return err
		}
		if cond(lines) {
			return nil
		}
	}
	return errorf("waited 40 s for %s", what)
}

func countDone(lines [][]string) int {
	n := 0
	for _, f := range lines {
		if f[0] == "done" {
			n++
		}
	}
	return n
}

// kill SIGKILLs r once the queue says keys are processing (held by the
// controller: the test's producer holds none), and logs the kill. It
// returns how many leases the kill returned.
func (r *ctlRun) kill(q *kwq.Queue, logPath string) (uint64, error) {
	for i := 0; ; i++ {
		s, err := q.Stats()
		if err != nil {
			return 0, err
		}
		if s.Processing > 0 || i == 1000 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	before, err := q.Stats()
	if err != nil {
		return 0, err
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.cmd.Wait()
	if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		return 0, errorf("controller %d exited (%v) before its SIGKILL", r.pid, r.cmd.ProcessState)
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(f, "kill - %d\n", r.pid)
	f.Close()
	after, err := q.Stats()
	if err != nil {
		return 0, err
	}
	return after.LeaseReturns - before.LeaseReturns, nil
}

// stop sends sig and waits for a clean exit.
func (r *ctlRun) stop(sig syscall.Signal) error {
	r.cmd.Process.Signal(sig)
	if err := r.cmd.Wait(); err != nil {
		return errorf("controller %d after %v: %v", r.pid, sig, err)
	}
	return nil
}

// checkCtlLog checks the log: no key begun while a live process
// reconciles it, none begun again after its done, each end by the
// process that began it, no overlap seen in a process, every key
// reconciled to its end. (A kill between a Done and its "done" line
// leaves a key with an end and no done: the empty queue at the end tells
// that its Done was made.)
func checkCtlLog(lines [][]string, keys []string) error {
	open := map[string]string{} // key: pid reconciling it
	killed := map[string]bool{}
	done := map[string]bool{}
	ended := map[string]bool{}
	cut := 0
	for i, f := range lines {
		if len(f) != 3 {
			return errorf("log line %d: %q", i+1, f)
		}
		what, key, pid := f[0], f[1], f[2]
		switch what {
		case "begin":
			if p, ok := open[key]; ok && !killed[p] {
				return errorf("line %d: %s begun by %s while %s reconciles it", i+1, key, pid, p)
			} else if ok {
				cut++
			}
			if done[key] {
				return errorf("line %d: %s begun again by %s after its Done", i+1, key, pid)
			}
			open[key] = pid
		case "end":
			if open[key] != pid {
				return errorf("line %d: %s ended by %s, begun by %q", i+1, key, pid, open[key])
			}
			delete(open, key)
			ended[key] = true
		case "done":
			done[key] = true
		case "kill":
			killed[pid] = true
		case "overlap":
			return errorf("line %d: %s in two workers of %s at once", i+1, key, pid)
		}
	}
	for _, k := range keys {
		if !ended[k] {
			return errorf("%s never reconciled (lost)", k)
		}
	}
	fmt.Printf("    # %d keys, %d reconciles cut by a kill and done again after it\n", len(keys), cut)
	if cut == 0 {
		return errorf("no kill landed in a reconcile")
	}
	return nil
}

func testControllerRestart() error {
	start := time.Now()
	name := freshName()
	logPath := fmt.Sprintf("%s/%s.log", os.TempDir(), name)
	os.Remove(logPath)
	defer os.Remove(logPath)
	q, err := kwq.New(controllerConfig(name))
	if err != nil {
		return err
	}
	defer finish(q)
	// The objects, as an informer adds them: some with a 317-byte key.
	var keys []string
	for i := 0; i < 200; i++ {
		k := fmt.Sprintf("ns-%d/obj-%04d", i%7, i)
		if i%50 == 1 {
			k = fmt.Sprintf("%s/%s-%04d", strings.Repeat("n", 63), strings.Repeat("o", 248), i)
		}
		keys = append(keys, k)
	}
	if _, err := q.AddBatch(keys); err != nil {
		return err
	}
	doneAtLeast := func(n int) func([][]string) bool {
		return func(l [][]string) bool { return countDone(l) >= n }
	}
	// 1. SIGKILL in the middle of the reconciles.
	r, err := startUntil(name, logPath, "30 reconciles", doneAtLeast(30))
	if err != nil {
		return err
	}
	back, err := r.kill(q, logPath)
	if err != nil {
		return err
	}
	fmt.Printf("    # killed in its reconciles: %d leases returned\n", back)
	// 2. SIGKILL during ShutDownWithDrain, with reconciles under way.
	if r, err = startUntil(name, logPath, "60 reconciles", doneAtLeast(60)); err != nil {
		return err
	}
	// A reconcile that begins after the hold file exists cannot end, so
	// the drain SIGTERM starts waits until the SIGKILL, however slow the
	// machine is (without it, a drain that found its keys finished let
	// the controller exit first).
	hold := holdPath(logPath)
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		return err
	}
	defer os.Remove(hold)
	lines, err := ctlLog(logPath)
	if err != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		return err
	}
	mark := len(lines)
	beganHeld := func(l [][]string) bool {
		for _, f := range l[min(mark, len(l)):] {
			if f[0] == "begin" && f[2] == fmt.Sprint(r.pid) {
				return true
			}
		}
		return false
	}
	if err := r.until(logPath, "a reconcile begun under the hold", beganHeld); err != nil {
		return err
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	drainStarted := func(l [][]string) bool {
		for _, f := range l {
			if f[0] == "drain" && f[2] == fmt.Sprint(r.pid) {
				return true
			}
		}
		return false
	}
	if err := r.until(logPath, "the drain", drainStarted); err != nil {
		return err
	}
	back, err = r.kill(q, logPath)
	if err != nil {
		return err
	}
	fmt.Printf("    # killed in ShutDownWithDrain: %d leases returned\n", back)
	if err := os.Remove(hold); err != nil {
		return err
	}
	// 3. A clean restart: ShutDown, exit, start again.
	if r, err = startUntil(name, logPath, "90 reconciles", doneAtLeast(90)); err != nil {
		return err
	}
	if err := r.stop(syscall.SIGINT); err != nil {
		return err
	}
	s, err := q.Stats()
	if err != nil || s.ShuttingDown || s.Processing != 0 {
		return errorf("after a clean stop: %+v %v; want the queue up, no key held", s, err)
	}
	fmt.Printf("    # a clean stop left %d keys ready\n", s.Len)
	// 4. The last start reconciles the rest, and drains.
	all := func(l [][]string) bool {
		ended := map[string]bool{}
		for _, f := range l {
			if f[0] == "end" {
				ended[f[1]] = true
			}
		}
		return len(ended) == len(keys)
	}
	if r, err = startUntil(name, logPath, "every key reconciled", all); err != nil {
		lines, _ := ctlLog(logPath)
		return errors.Join(err, checkCtlLog(lines, keys))
	}
	if err := r.stop(syscall.SIGTERM); err != nil {
		return err
	}
	lines, err = ctlLog(logPath)
	if err != nil {
		return err
	}
	if err := checkCtlLog(lines, keys); err != nil {
		return err
	}
	if s, err := q.Stats(); err != nil || s.Len != 0 || s.Processing != 0 || s.Waiting != 0 {
		return errorf("at the end: %+v %v, want an empty queue", s, err)
	}
	fmt.Printf("    # four starts of the controller in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

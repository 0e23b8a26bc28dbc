// SPDX-License-Identifier: GPL-2.0

//go:build kwqcount

// Command gocount makes N calls of one operation of the Go package kwq
// against the stand-in kernel of its kwqcount build
// (userspace/go/ioctlnow_count.go), for gocount.sh to count the package's
// own instructions per call under callgrind.
//
// usage: gocount add|donegetone|addafter|tryaddafter N
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"kwq.dev/kwq"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gocount add|donegetone|addafter|tryaddafter N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "gocount: N must be a positive number")
		os.Exit(2)
	}
	q := kwq.NewCounting()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%015d", i)
	}
	switch os.Args[1] {
	case "add":
		for i := 0; i < n; i++ {
			q.Add(keys[i&1023])
		}
	case "donegetone":
		held := ""
		for i := 0; i < n; i++ {
			k, err := q.DoneGetOne(held, kwq.Forever)
			if err != nil {
				fmt.Fprintln(os.Stderr, "gocount:", err)
				os.Exit(1)
			}
			held = k
		}
	case "addafter":
		for i := 0; i < n; i++ {
			q.AddAfter(keys[i&1023], time.Hour)
		}
		q.Flush()
	case "tryaddafter":
		for i := 0; i < n; i++ {
			if err := q.TryAddAfter(keys[i&1023], time.Hour); err != nil {
				fmt.Fprintln(os.Stderr, "gocount:", err)
				os.Exit(1)
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "gocount: unknown operation", os.Args[1])
		os.Exit(2)
	}
}

package knit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/knit-go/knit"
)

// Every subscription sees every item, in order; the producer waits for
// the slowest. Close is lossless: each subscription drains what it has
// not seen, then its range ends.
func ExampleBroadcast() {
	ctx := context.Background()
	b := knit.NewBroadcast[string](4, knit.Park{})
	upper, count := b.Subscribe(), b.Subscribe() // before the first push: they see everything

	var wg sync.WaitGroup
	var shouted []string
	var n int
	wg.Go(func() {
		for s := range knit.All(ctx, upper) {
			shouted = append(shouted, strings.ToUpper(s))
		}
	})
	wg.Go(func() {
		for range knit.All(ctx, count) {
			n++
		}
	})
	for _, s := range []string{"a", "b", "c", "d", "e", "f"} {
		b.Push(ctx, s) // waits while the slower subscription is a lap behind
	}
	b.Close()
	wg.Wait()
	fmt.Println(shouted, n)
	// Output: [A B C D E F] 6
}

// A pipeline in one ring: each stage follows the one before it and sees an
// item once that one is done with it. PopFunc handles the item in its
// slot, so what a stage writes is what the next stage reads; nothing is
// copied between stages.
func ExampleBroadcast_SubscribeAfter() {
	type order struct {
		id     int
		price  int
		taxed  int
		stored bool
	}
	ctx := context.Background()
	b := knit.NewBroadcast[order](8, knit.Park{})
	tax := b.Subscribe()
	store := b.SubscribeAfter(tax)
	report := b.SubscribeAfter(store)

	// A stage runs f on every item until the Broadcast is closed and
	// drained (ErrClosed: the stage is done) or ctx ends (its error).
	stage := func(s *knit.Subscription[order], f func(*order)) error {
		for {
			if err := s.PopFunc(ctx, f); errors.Is(err, knit.ErrClosed) {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := stage(tax, func(o *order) { o.taxed = o.price * 120 / 100 }); err != nil {
			fmt.Println("tax:", err)
		}
	})
	wg.Go(func() {
		if err := stage(store, func(o *order) { o.stored = o.taxed > 0 }); err != nil {
			fmt.Println("store:", err)
		}
	})
	wg.Go(func() {
		for o := range knit.All(ctx, report) {
			fmt.Println(o.id, o.taxed, o.stored)
		}
	})
	for i := 1; i <= 3; i++ {
		b.Push(ctx, order{id: i, price: 10 * i})
	}
	b.Close()
	wg.Wait()
	// Output:
	// 1 12 true
	// 2 24 true
	// 3 36 true
}

// A subscription that leaves stops holding the producer back at once.
func ExampleSubscription_Unsubscribe() {
	b := knit.NewBroadcast[int](2, knit.Park{})
	fast, slow := b.Subscribe(), b.Subscribe()
	b.TryPushBatch([]int{1, 2})
	fast.TryPopBatch(make([]int, 2))
	fmt.Println(b.TryPush(3)) // slow is a lap behind
	slow.Unsubscribe()
	fmt.Println(b.TryPush(3))
	_, err := slow.TryPop()
	fmt.Println(err)
	// Output:
	// knit: full
	// <nil>
	// knit: closed
}

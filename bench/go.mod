module github.com/knit-go/knit/bench

go 1.26.0

require (
	github.com/Workiva/go-datastructures v1.1.7
	github.com/alitto/pond/v2 v2.7.1
	github.com/anishathalye/porcupine v1.3.1
	github.com/bytedance/gopkg v0.1.4
	github.com/gammazero/workerpool v1.3.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/knit-go/knit v0.0.0
	github.com/panjf2000/ants/v2 v2.12.1
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/sourcegraph/conc v0.3.0
	github.com/tsenart/vegeta/v12 v12.13.0
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.50.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/gammazero/deque v1.2.2 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/net v0.27.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)

replace github.com/knit-go/knit => ../

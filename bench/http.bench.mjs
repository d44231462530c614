// `npm run bench`: without BENCH_CLUSTER, the quick figures (reads and validation, no cluster:
// bench/quick.bench.mjs); with BENCH_CLUSTER=1, the figures users compare against a local control
// plane it starts itself (bench/cluster.bench.mjs, issue 8). Both run the built dist/.
const cluster = !['', '0', 'false'].includes(process.env.BENCH_CLUSTER ?? '');
await import(cluster ? './cluster.bench.mjs' : './quick.bench.mjs');

// uPlot (loaded by index.html as a classic script: window.uPlot) with the dashboard's
// defaults: sized to its box, redrawn on resize, and described for screen readers (the
// numbers are also in a table next to each chart).

const PALETTE = ['#0b57d0', '#b3261e', '#146c2e', '#7d5260', '#8a4b00', '#5b5f71'];

export function lineChart(box, { title, series, data, yLabel, limit }) {
  const U = window.uPlot;
  if (!U) {
    box.textContent = 'Chart library not loaded.';
    return { update() {}, destroy() {} };
  }
  box.setAttribute('role', 'img');
  box.setAttribute('aria-label', title);
  const width = () => Math.max(280, box.clientWidth || 600);
  const opts = {
    width: width(),
    height: 260,
    title: undefined,
    legend: { show: true },
    axes: [{}, { label: yLabel, size: 60 }],
    series: [
      {},
      ...series.map((s, i) => ({
        label: s.label,
        stroke: s.stroke ?? PALETTE[i % PALETTE.length],
        width: s.dash ? 2 : 1.5,
        dash: s.dash,
        fill: s.fill,
        points: { show: false },
      })),
    ],
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(max, limit ?? 0, 1) * 1.1] } },
  };
  const plot = new U(opts, data, box);
  const onResize = () => plot.setSize({ width: width(), height: 260 });
  window.addEventListener('resize', onResize);
  return {
    update(next) { plot.setData(next); },
    destroy() {
      window.removeEventListener('resize', onResize);
      plot.destroy();
    },
  };
}

// The charting the inspector and the village report share: a palette and line series on a
// canvas (series: name → [[x, y], …]; the legend, when given, names each in its colour).
const palette = ["#4a7bd0", "#d04a4a", "#3a9a5a", "#c08a1a", "#8a4ad0", "#2aa0a0", "#a0522d", "#555"];

function drawSeries(canvas, series, legend) {
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const points = Object.values(series).flat();
  canvas.dataset.points = String(points.length);
  if (points.length === 0) return;
  const xs = points.map(p => p[0]), ys = points.map(p => p[1]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs) || 1];
  const [y0, y1] = [Math.min(0, ...ys), Math.max(...ys) || 1];
  const sx = x => 30 + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (canvas.width - 40);
  const sy = y => canvas.height - 15 - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (canvas.height - 25);
  ctx.fillStyle = "#888"; ctx.font = "10px sans-serif";
  ctx.fillText(y1.toFixed(2), 2, 12); ctx.fillText(y0.toFixed(2), 2, canvas.height - 15);
  if (legend) legend.replaceChildren();
  Object.entries(series).forEach(([name, data], i) => {
    const color = palette[i % palette.length];
    ctx.strokeStyle = color; ctx.fillStyle = color; ctx.beginPath();
    data.forEach(([x, y], j) => { j ? ctx.lineTo(sx(x), sy(y)) : ctx.moveTo(sx(x), sy(y)); });
    ctx.stroke();
    data.forEach(([x, y]) => ctx.fillRect(sx(x) - 2, sy(y) - 2, 4, 4));
    if (legend) { const s = document.createElement("span"); s.textContent = "■ " + name; s.style.color = color; legend.append(s); }
  });
}

// Two small chart kinds for bench/report.md, as standalone SVG text: horizontal bars (one
// figure per label) and log-log lines (a cost curve per series). No dependencies.

export interface Bar {
  readonly label: string;
  readonly value: number;
}

export interface Line {
  readonly name: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

const COLORS = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5"];
const FONT = 'font-family="system-ui, sans-serif" font-size="12"';

const escapeXml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const fmt = (value: number): string =>
  Math.abs(value) >= 100 ? Math.round(value).toLocaleString("en-US") : String(Math.round(value * 1000) / 1000);

function frame(width: number, height: number, title: string, body: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(title)}" ${FONT}>`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="12" y="20" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    body,
    "</svg>",
  ].join("\n");
}

/** Horizontal bars from zero, one row per bar; `reference` draws a dashed target line. */
export function barChart(
  title: string,
  unit: string,
  bars: readonly Bar[],
  reference?: { readonly value: number; readonly label: string },
): string {
  const labelWidth = 260;
  const plotWidth = 420;
  const rowHeight = 22;
  const top = 34;
  const height = top + bars.length * rowHeight + 34;
  const max = Math.max(...bars.map((bar) => bar.value), reference?.value ?? 0) * 1.1 || 1;
  const x = (value: number): number => labelWidth + (Math.max(value, 0) / max) * plotWidth;
  const rows = bars.map((bar, index) => {
    const y = top + index * rowHeight;
    return [
      `<text x="${labelWidth - 8}" y="${y + 15}" text-anchor="end">${escapeXml(bar.label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 3}" width="${(x(bar.value) - labelWidth).toFixed(1)}" height="${rowHeight - 6}" fill="${COLORS[index % COLORS.length]}"/>`,
      `<text x="${(x(bar.value) + 4).toFixed(1)}" y="${y + 15}">${fmt(bar.value)} ${escapeXml(unit)}</text>`,
    ].join("");
  });
  const axisY = top + bars.length * rowHeight + 4;
  const extra =
    reference === undefined
      ? ""
      : `<line x1="${x(reference.value).toFixed(1)}" x2="${x(reference.value).toFixed(1)}" y1="${top}" y2="${axisY}" stroke="#333" stroke-dasharray="4 3"/>` +
        `<text x="${x(reference.value).toFixed(1)}" y="${axisY + 16}" text-anchor="middle">${escapeXml(reference.label)}</text>`;
  const axis = `<line x1="${labelWidth}" x2="${labelWidth}" y1="${top}" y2="${axisY}" stroke="#333"/>`;
  return frame(labelWidth + plotWidth + 110, height, title, [...rows, axis, extra].join("\n"));
}

/** Log-log lines: x and y on powers of 10 (or 2 for x), one polyline and legend entry per series. */
export function logLogChart(title: string, xLabel: string, yLabel: string, lines: readonly Line[]): string {
  const left = 70;
  const top = 34;
  const plotWidth = 480;
  const plotHeight = 260;
  const legendWidth = 230;
  const all = lines.flatMap((line) => line.points).filter((point) => point.x > 0 && point.y > 0);
  const [xMin, xMax] = extent(all.map((point) => point.x));
  const [yMin, yMax] = extent(all.map((point) => point.y));
  const lx = (value: number): number => left + ((Math.log10(value) - xMin) / (xMax - xMin || 1)) * plotWidth;
  const ly = (value: number): number => top + plotHeight - ((Math.log10(value) - yMin) / (yMax - yMin || 1)) * plotHeight;
  const grid: string[] = [];
  for (let exponent = Math.ceil(yMin); exponent <= Math.floor(yMax); exponent += 1) {
    const y = ly(10 ** exponent).toFixed(1);
    grid.push(
      `<line x1="${left}" x2="${left + plotWidth}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${left - 6}" y="${y}" text-anchor="end" dy="4">${fmt(10 ** exponent)}</text>`,
    );
  }
  for (let exponent = Math.ceil(xMin); exponent <= Math.floor(xMax); exponent += 1) {
    const x = lx(10 ** exponent).toFixed(1);
    grid.push(
      `<line x1="${x}" x2="${x}" y1="${top}" y2="${top + plotHeight}" stroke="#eee"/><text x="${x}" y="${top + plotHeight + 16}" text-anchor="middle">${fmt(10 ** exponent)}</text>`,
    );
  }
  const paths = lines.map((line, index) => {
    const color = COLORS[index % COLORS.length];
    const points = line.points.filter((point) => point.x > 0 && point.y > 0);
    const d = points.map((point) => `${lx(point.x).toFixed(1)},${ly(point.y).toFixed(1)}`).join(" ");
    const dots = points
      .map((point) => `<circle cx="${lx(point.x).toFixed(1)}" cy="${ly(point.y).toFixed(1)}" r="2.5" fill="${color}"/>`)
      .join("");
    const legendY = top + 14 + index * 18;
    return (
      `<polyline points="${d}" fill="none" stroke="${color}" stroke-width="2"/>${dots}` +
      `<rect x="${left + plotWidth + 16}" y="${legendY - 9}" width="12" height="10" fill="${color}"/>` +
      `<text x="${left + plotWidth + 32}" y="${legendY}">${escapeXml(line.name)}</text>`
    );
  });
  const axes =
    `<rect x="${left}" y="${top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#333"/>` +
    `<text x="${left + plotWidth / 2}" y="${top + plotHeight + 34}" text-anchor="middle">${escapeXml(xLabel)}</text>` +
    `<text x="16" y="${top + plotHeight / 2}" transform="rotate(-90 16 ${top + plotHeight / 2})" text-anchor="middle">${escapeXml(yLabel)}</text>`;
  return frame(left + plotWidth + legendWidth, top + plotHeight + 46, title, [...grid, ...paths, axes].join("\n"));
}

/** [floor, ceil] of log10 over the values, widened to at least one decade. */
function extent(values: readonly number[]): [number, number] {
  if (values.length === 0) return [0, 1];
  const logs = values.map((value) => Math.log10(value));
  const low = Math.min(...logs);
  const high = Math.max(...logs);
  return high - low < 1 ? [Math.floor(low), Math.floor(low) + 1.0001 + (high - low)] : [low - 0.05, high + 0.05];
}

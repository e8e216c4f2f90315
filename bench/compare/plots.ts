import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vega from 'vega';
import * as vl from 'vega-lite';

/**
 * Standalone SVG files for BENCHMARKS.md (unlike src/report, which inlines SVG in HTML, a file keeps
 * its XML namespace so it renders on its own). Specs are Vega-Lite, rendered headless in Node.
 */
export async function writeSvg(dir: string, name: string, spec: vl.TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.svg`);
    writeFileSync(file, svg);
    return file;
  } finally {
    view.finalize();
  }
}

export interface BandRow {
  arm: string;
  x: number;
  mean: number;
  lo: number;
  hi: number;
}

/** Seed-mean line with a min–max band per arm. */
export function bandChart(title: string, rows: BandRow[], x: string, y: string, yDomain?: [number, number]): vl.TopLevelSpec {
  const yScale = yDomain ? { domain: yDomain } : { zero: false };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    width: 420,
    height: 240,
    background: 'white',
    data: { values: rows },
    encoding: { x: { field: 'x', type: 'quantitative', title: x }, color: { field: 'arm', type: 'nominal', title: null } },
    layer: [
      { mark: { type: 'area', opacity: 0.15 }, encoding: { y: { field: 'lo', type: 'quantitative', title: y, scale: yScale }, y2: { field: 'hi' } } },
      { mark: { type: 'line', point: true, strokeWidth: 1.5 }, encoding: { y: { field: 'mean', type: 'quantitative', scale: yScale } } },
    ],
  } as vl.TopLevelSpec;
}

export interface BarRow {
  arm: string;
  metric: string;
  mean: number;
  lo: number;
  hi: number;
}

/** One panel per metric: seed-mean bars with mean ± sd whiskers. */
export function barChart(title: string, rows: BarRow[], order: string[]): vl.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    background: 'white',
    data: { values: rows },
    facet: { column: { field: 'metric', type: 'nominal', title: null } },
    resolve: { scale: { x: 'independent' } },
    spec: {
      width: 200,
      height: 22 * order.length,
      encoding: { y: { field: 'arm', type: 'nominal', sort: order, title: null } },
      layer: [
        {
          mark: { type: 'bar', opacity: 0.7 },
          encoding: { x: { field: 'mean', type: 'quantitative', title: null }, color: { field: 'arm', type: 'nominal', legend: null, sort: order } },
        },
        { mark: { type: 'rule' }, encoding: { x: { field: 'lo', type: 'quantitative' }, x2: { field: 'hi' } } },
      ],
    },
  } as vl.TopLevelSpec;
}

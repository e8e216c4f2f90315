import * as vega from 'vega';
import * as vl from 'vega-lite';

/**
 * Renders a Vega-Lite spec to an SVG string in Node (no browser, no canvas): compile to Vega, run a
 * headless view, serialise. The XML namespace declarations are dropped because the SVG is inlined in
 * HTML, where the parser does not need them, and the page then holds no URL at all.
 */
export async function renderSvg(spec: vl.TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    return svg.replace(/\s+xmlns(:xlink)?="[^"]*"/g, '');
  } finally {
    view.finalize();
  }
}

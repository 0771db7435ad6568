import htm from "htm";
import { h } from "preact";

/** JSX-like templates without a build step: html`<div class=${c}>…</div>`. */
export const html = htm.bind(h);

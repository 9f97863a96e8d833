// Svelte 5 compiles <script lang="ts"> natively (type annotations only); no preprocessor needed.
export default {};

// A page load imports the preload afresh under a distinct module id (vite keeps the query).
declare module '*?page=1';
declare module '*?page=2';

// SQL files are bundled as text (esbuild text loader, jest sql transform).
declare module '*.sql' {
  const sql: string;
  export default sql;
}

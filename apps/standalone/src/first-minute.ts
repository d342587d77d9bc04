export interface FirstMinuteFacts {
  /** The port the server listens on. */
  port: number;
  /** Where the generated admin token is kept (DATA_DIR/secrets.json); undefined when ADMIN_TOKEN came from the environment. */
  secretsFile: string | undefined;
  /** The API reference's path, once the service serves one. */
  apiReferencePath?: string;
}

/**
 * The block `npm start` prints for a person once it listens: where the dashboard is, where the admin token is kept,
 * and the one command that creates a first project and prints its keys. Plain text on stderr, outside the log stream.
 */
export function firstMinuteBlock(facts: FirstMinuteFacts): string {
  const base = `http://localhost:${facts.port}`;
  const token = facts.secretsFile ? `kept in ${facts.secretsFile} (the admin CLI reads it there)` : 'the ADMIN_TOKEN you started with (export it for the admin CLI)';
  const lines = [
    '',
    '  Event analytics is running.',
    '',
    `  Dashboard      ${base}/   (sign in with a project's rk_ read key)`,
    ...(facts.apiReferencePath ? [`  API reference  ${base}${facts.apiReferencePath}`] : []),
    `  Admin token    ${token}`,
    '  First project  npm run admin -- create-project --name my-site --origin https://my-site.example',
    '                 prints the project and its pk_, sk_ and rk_ keys (shown once: keep them);',
    `                 then open ${base}/ and paste the rk_ key`,
    '',
  ];
  return lines.join('\n');
}

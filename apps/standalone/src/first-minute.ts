export interface FirstMinuteFacts {
  /** The port the server listens on. */
  port: number;
  /** Where the generated admin token is kept (DATA_DIR/secrets.json); undefined when ADMIN_TOKEN came from the environment. */
  secretsFile: string | undefined;
  /** The API reference's path, once the service serves one. */
  apiReferencePath?: string;
  /** How many projects the key store holds; the first-project command is offered only when none (or unknown). */
  projectCount?: number;
  /** Whether any user exists: while none, how to set up the first account (the dashboard's first-run page, or the CLI). */
  hasUsers?: boolean;
}

/**
 * The block `npm start` prints for a person once it listens: where the dashboard is, where the admin token is kept,
 * and either the one command that creates a first project or how to open the dashboard on the existing ones.
 * Plain text on stderr, outside the log stream.
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
    ...(facts.hasUsers === undefined ? [] : facts.hasUsers ? accountsLines(base) : firstAccountLines(base)),
    ...(facts.projectCount ? projectsLines(facts.projectCount, base) : firstProjectLines(base)),
    '',
  ];
  return lines.join('\n');
}

function firstProjectLines(base: string): string[] {
  return [
    '  First project  npm run admin -- create-project --name my-site --origin https://my-site.example',
    '                 prints the project and its pk_, sk_ and rk_ keys (shown once: keep them);',
    `                 then open ${base}/ and paste the rk_ key`,
  ];
}

function projectsLines(count: number, base: string): string[] {
  return [
    `  Projects       ${count} ${count === 1 ? 'project' : 'projects'} (npm run admin -- projects lists them)`,
    `                 open ${base}/ and paste a project's rk_ key; lost it? a new one:`,
    '                 npm run admin -- create-key PROJECT_ID --kind rk',
  ];
}

function firstAccountLines(base: string): string[] {
  return [
    `  First account  open ${base}/ (the first-run page), or on this machine:`,
    '                 npm run admin -- setup --email you@example.com   (asks for the password, not echoed)',
    '                 the account owns the organization "Default", which gets every project',
  ];
}

function accountsLines(base: string): string[] {
  return [`  Accounts       sign in at ${base}/ with your email and password (npm run admin -- users lists them)`];
}

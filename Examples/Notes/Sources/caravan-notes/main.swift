import CaravanCLI
import Notes

// The whole `caravan` command line (serve, migrate, keys, user, backup, …) with the notes app in it.
await CaravanCommandLine.main(apps: [NotesModule.module])
